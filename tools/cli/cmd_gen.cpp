#include <cstdio>

#include "commands.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/generate.hpp"
#include "epsjoin/io.hpp"
#include "input.hpp"

namespace epsjoin::cli {

const command_spec& gen_command() {
  static const command_spec spec{
      "gen",
      "gen SPEC --output FILE [--format F] [--paper] [--digits N]",
      "Generates a seeded, reproducible point set and writes it. SPEC is distribution:d:N with\n"
      "optional :key=value parts, e.g. expo:2:2000000, uniform:4:1e6, gauss:8:1e5:clusters=32.\n"
      "Distributions: uniform in [0,1]^d; expo (exponential, lambda=40, redrawn outside [0,1]);\n"
      "gauss (Gaussian clusters). Keys: seed, lambda, clusters, sigma, paper.",
      {
          {"output", "FILE", "file to write (required)"},
          {"format", "F",
           "text, npy, f64 or f32 (raw little-endian); default from the extension of FILE "
           "(.npy, .f64, .f32, anything else text)"},
          {"paper", "",
           "expo only: reproduce the papers' Expo* datasets (their mt19937 stream, values rounded "
           "to 6 significant digits); text output then defaults to 6 digits, as their files"},
          {"digits", "N", "significant digits of text output (default 17, exact for float64)"},
      },
      "SPEC"};
  return spec;
}

int run_gen(const parsed_args& args) {
  if (!args.positional()) throw usage_error{"missing SPEC (e.g. expo:2:100000)"};
  if (!args.has("output")) throw usage_error{"missing --output FILE"};
  if (args.get("output").empty()) throw usage_error{"--output needs a file name"};
  generator_spec spec = parse_spec_argument("SPEC", *args.positional());
  if (args.has("paper")) spec.paper = true;
  require_points("SPEC", *args.positional(), spec);
  const data_format format = parse_data_format(args.get("format", "auto"));
  const int digits = static_cast<int>(args.get_size("digits", spec.paper ? 6 : 17));
  if (digits < 1 || digits > 17) throw usage_error{"--digits must be between 1 and 17"};
  dataset points;
  try {
    points = generate(spec);
  } catch (const invalid_argument& e) {  // a key the distribution does not take (--paper)
    throw usage_error{std::string("SPEC: ") + e.what()};
  }
  write_dataset(args.get("output"), points.view(), format, digits);
  std::fprintf(stderr, "epsjoin gen: wrote %zu points of dimension %zu (%s) to %s\n", points.n(),
               points.d(), to_string(spec).c_str(), args.get("output").c_str());
  return 0;
}

}  // namespace epsjoin::cli
