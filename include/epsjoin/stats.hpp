#pragma once
/// @file stats.hpp
/// @brief What one join did and how long each stage took.

#include <cstdint>
#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin {

/// @brief Wall time of one pipeline stage ("index", "plan", "execute", "transfer", ...).
struct stage_time {
  std::string name;
  double seconds = 0.0;
};

/// @brief Summary of one join, filled by the dispatcher and the engine.
struct join_stats {
  std::string engine;            ///< the engine that ran (never "auto")
  std::string engine_reason;     ///< why `auto` chose it; empty when named explicitly
  std::size_t n_queries = 0;
  std::size_t n_data = 0;
  std::size_t d = 0;
  double eps = 0.0;
  bool self_join = true;
  scalar_type precision = scalar_type::f64;
  unsigned threads = 0;
  /// Ordered pairs with distinct ids, (i, j) and (j, i) both counted for a self-join.
  std::uint64_t pairs = 0;
  /// Self pairs (i, i) delivered (non-zero only with include_self).
  std::uint64_t self_pairs = 0;
  /// Distances computed (candidates refined).
  std::uint64_t candidates = 0;
  std::vector<stage_time> stages;
  /// Bytes of points copied from the host to a device (uploads for the index or the kernels);
  /// 0 for points the caller passed in device memory (`memory_space::device`).
  std::uint64_t h2d_point_bytes = 0;
  /// Bytes of result copied from the host to a device: a `device_csr_sink` fed by an engine that
  /// delivers through the host (gpu-sj, brute-gpu; or a table too large to lay out on the device).
  std::uint64_t h2d_result_bytes = 0;
  /// Wall time of the whole join, validation to the sink's finish.
  double seconds = 0.0;
  /// Engine-specific figures as name/value text, printed in the summary.
  std::vector<std::pair<std::string, std::string>> notes;

  /// @brief Mean neighbours per query, self excluded: (|R| - |D|) / |D| for a self-join.
  double selectivity() const noexcept {
    return n_queries == 0 ? 0.0 : static_cast<double>(pairs) / static_cast<double>(n_queries);
  }
  double candidates_per_second() const noexcept {
    return seconds > 0 ? static_cast<double>(candidates) / seconds : 0.0;
  }
  /// @brief Adds `seconds` to the stage called `name`, creating it at the end if new.
  void add_stage(const std::string& name, double seconds);
};

}  // namespace epsjoin
