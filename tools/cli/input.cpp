#include "input.hpp"

#include <chrono>

#include "args.hpp"
#include "epsjoin/error.hpp"

namespace epsjoin::cli {

data_format parse_data_format(const std::string& name) {
  if (name == "auto") return data_format::automatic;
  if (name == "text" || name == "csv") return data_format::text;
  if (name == "npy") return data_format::npy;
  if (name == "f64") return data_format::raw_f64;
  if (name == "f32") return data_format::raw_f32;
  throw usage_error{"unknown data format '" + name + "' (expected text, npy, f64 or f32)"};
}

generator_spec parse_spec_argument(const std::string& flag, const std::string& text) {
  try {
    return parse_generator_spec(text);
  } catch (const invalid_argument& e) {
    throw usage_error{flag + ": " + e.what()};
  }
}

void require_points(const std::string& flag, const std::string& text, const generator_spec& spec) {
  if (spec.n == 0) {
    throw io_error(flag + " " + text + ": no points (N = 0); an empty input file is an error too");
  }
}

void check_input_shape(const std::string& flag, const std::string& file, std::size_t dim) {
  const data_format format = format_for_path(file);
  if (dim == 0 && (format == data_format::raw_f64 || format == data_format::raw_f32)) {
    throw usage_error{"--dim D is needed for " + flag + " " + file +
                      ": a raw ." + (format == data_format::raw_f64 ? "f64" : "f32") +
                      " file has no header, so give the number of values per point"};
  }
}

std::size_t read_input_dim(const parsed_args& args) {
  const std::size_t dim = args.get_size("dim", 0);
  if (args.has("dim") && dim == 0) throw usage_error{"--dim must be at least 1"};
  if (args.has("input")) check_input_shape("--input", args.get("input"), dim);
  if (args.has("queries")) check_input_shape("--queries", args.get("queries"), dim);
  if (args.has("generate")) parse_spec_argument("--generate", args.get("generate"));
  if (args.has("generate-queries")) {
    parse_spec_argument("--generate-queries", args.get("generate-queries"));
  }
  return dim;
}

loaded_points load_points(const std::string& file, const std::string& spec, std::size_t dim,
                          bool paper, const std::string& spec_flag) {
  const auto start = std::chrono::steady_clock::now();
  loaded_points out;
  if (!spec.empty()) {
    generator_spec g = parse_spec_argument(spec_flag, spec);
    if (paper) g.paper = true;
    require_points(spec_flag, spec, g);
    try {
      out.points = generate(g);
    } catch (const invalid_argument& e) {  // a key the distribution does not take (--paper)
      throw usage_error{spec_flag + ": " + e.what()};
    }
    out.description = "generated " + to_string(g);
  } else {
    read_options options;
    options.dim = dim;
    out.points = read_dataset(file, options);
    out.description = file;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string dimensions(std::size_t d) {
  return std::to_string(d) + (d == 1 ? " dimension" : " dimensions");
}

}  // namespace epsjoin::cli
