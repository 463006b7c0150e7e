#pragma once
// Loading a point set from a file or a generator spec, shared by the commands.

#include <string>

#include "epsjoin/dataset.hpp"
#include "epsjoin/io.hpp"

namespace epsjoin::cli {

/// "auto", "text", "npy", "f64", "f32"; anything else is a usage error.
data_format parse_data_format(const std::string& name);

struct loaded_points {
  dataset points;
  std::string description;  // file name or canonical generator spec
  double seconds = 0;
};

/// Exactly one of `file` and `spec` is non-empty.
loaded_points load_points(const std::string& file, const std::string& spec, std::size_t dim,
                          bool paper);

}  // namespace epsjoin::cli
