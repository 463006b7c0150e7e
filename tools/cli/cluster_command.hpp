#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

#include "args.hpp"
#include "epsjoin/resources.hpp"
#include "input.hpp"

namespace epsjoin::cli {

/// What the clustering commands (dbscan, optics) share around their algorithm: the checks made
/// before any data is read, the resources, the points, and where the summary goes.
class cluster_command {
 public:
  /// Checks one of --input and --generate, `radius_flag` and --min-samples (at least 1), the
  /// output path (before the data: a bad path costs nothing), the threads and the input's
  /// dimension; each a usage_error.
  cluster_command(const parsed_args& args, const char* radius_flag);

  /// Resources of the command's threads and memory limits, and the points loaded.
  resources make_resources() const;
  loaded_points load() const;

  /// The summary, JSON or human, on stdout, or on stderr where the result goes to stdout;
  /// nothing with --quiet.
  void print_summary(const std::string& json, const std::string& human) const;
  double seconds_since_start() const;

  std::size_t min_samples() const { return min_samples_; }
  const std::string& output() const { return output_; }
  /// Whether a progress bar may be drawn (neither --quiet nor --json).
  bool chatty() const { return !quiet_ && !as_json_; }

 private:
  const parsed_args& args_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::size_t min_samples_ = 0;
  std::string output_;
  bool quiet_ = false;
  bool as_json_ = false;
  unsigned threads_ = 0;
  std::size_t dim_ = 0;
  std::FILE* summary_out_ = stdout;
};

}  // namespace epsjoin::cli
