#pragma once
// Loading a point set from a file or a generator spec, shared by the commands.

#include <string>

#include "args.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/generate.hpp"
#include "epsjoin/io.hpp"

namespace epsjoin::cli {

/// "auto", "text", "npy", "f64", "f32"; anything else is a usage error.
data_format parse_data_format(const std::string& name);

/// The generator spec given to `flag` (--generate, gen's SPEC, ...); a bad one is a usage error.
generator_spec parse_spec_argument(const std::string& flag, const std::string& text);

/// A spec of N = 0 is an error, as an empty input file is: there is nothing to join or write.
void require_points(const std::string& flag, const std::string& text, const generator_spec& spec);

/// Checks before reading anything that `file` can be read with `dim` (0: not given): a raw
/// .f64/.f32 file has no header, so it needs --dim. Usage errors name `flag`.
void check_input_shape(const std::string& flag, const std::string& file, std::size_t dim);

/// --dim (0 when not given), after checking what can be checked of the inputs before reading
/// them: --dim 0, a raw --input or --queries file without --dim, a bad --generate or
/// --generate-queries spec are usage errors.
std::size_t read_input_dim(const parsed_args& args);

struct loaded_points {
  dataset points;
  std::string description;  // file name or canonical generator spec
  double seconds = 0;
};

/// Exactly one of `file` and `spec` is non-empty; `spec_flag` names the spec in errors.
loaded_points load_points(const std::string& file, const std::string& spec, std::size_t dim,
                          bool paper, const std::string& spec_flag = "--generate");

/// "1 dimension", "3 dimensions".
std::string dimensions(std::size_t d);

}  // namespace epsjoin::cli
