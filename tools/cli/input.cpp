#include "input.hpp"

#include <chrono>

#include "args.hpp"
#include "epsjoin/generate.hpp"

namespace epsjoin::cli {

data_format parse_data_format(const std::string& name) {
  if (name == "auto") return data_format::automatic;
  if (name == "text" || name == "csv") return data_format::text;
  if (name == "npy") return data_format::npy;
  if (name == "f64") return data_format::raw_f64;
  if (name == "f32") return data_format::raw_f32;
  throw usage_error{"unknown data format '" + name + "' (expected text, npy, f64 or f32)"};
}

loaded_points load_points(const std::string& file, const std::string& spec, std::size_t dim,
                          bool paper) {
  const auto start = std::chrono::steady_clock::now();
  loaded_points out;
  if (!spec.empty()) {
    generator_spec g = parse_generator_spec(spec);
    if (paper) g.paper = true;
    out.points = generate(g);
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

}  // namespace epsjoin::cli
