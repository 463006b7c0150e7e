#pragma once
// EpsIndex, the extension's handle on an epsjoin::eps_index (index_calls.cpp).

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <optional>

#include <epsjoin/index.hpp>

#include "join_calls.hpp"

namespace epsjoin_python {

class index_handle {
 public:
  /// Builds the index of `data` at `max_eps` (and up to `finer_grids` finer grids) with the
  /// settings' precision, metric and params.
  index_handle(points_array data, double max_eps, unsigned finer_grids,
               const run_settings& settings);
  ~index_handle();
  double max_eps() const;
  std::size_t n() const;
  std::size_t d() const;
  std::uint64_t memory_bytes() const;
  /// (indptr [rows + 1] uint64, indices [nnz] uint32, stats dict) of `queries` (None: the
  /// indexed points themselves) at eps. `added_per_pair`: host bytes the caller adds per pair
  /// afterwards (a graph's data array), checked with the table against the memory limit.
  /// `with_stats` false: None for the dict.
  nb::tuple table(std::optional<points_array> queries, double eps, bool include_self,
                  bool sort_indices, double added_per_pair, const run_settings& settings,
                  bool with_stats = true) const;
  /// (total, per-row counts uint64 or None, stats dict or None).
  nb::tuple counts(std::optional<points_array> queries, double eps, bool include_self,
                   bool per_row, const run_settings& settings, bool with_stats = true) const;
  /// nearest_result's tuple: each query's k nearest indexed points within eps. `data` is the
  /// array the index was built from (the distances are computed from it).
  nb::tuple nearest(std::optional<points_array> queries, double eps, std::size_t k,
                    bool include_self, points_array data, const run_settings& settings,
                    bool with_stats = true) const;

 private:
  epsjoin::join_stats run(const std::optional<points_array>& queries, double eps,
                          bool include_self, const run_settings& settings,
                          epsjoin::result_sink& sink) const;
  std::unique_ptr<epsjoin::eps_index> index_;
};

/// Adds the EpsIndex class to the module.
void bind_index(nb::module_& m);

}  // namespace epsjoin_python
