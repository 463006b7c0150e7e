#pragma once
// The k nearest within a radius, for the Python package (nearest_calls.cpp).

#include <nanobind/nanobind.h>

#include <cstddef>
#include <optional>

#include <epsjoin/nearest.hpp>

#include "join_calls.hpp"

namespace epsjoin_python {

/// (distances float64 [rows x k], indices int64 [rows x k], stats dict or None) of a
/// nearest_table: each row nearest first, a missing neighbour at inf with index `n_points`.
nb::tuple nearest_result(const epsjoin::nearest_table& table, std::size_t k,
                         std::size_t n_points, const epsjoin::join_stats& stats,
                         bool with_stats);

/// Each query's k nearest points of `data` (None: the queries themselves, a self-join) within
/// eps, by the settings' engine and metric.
nb::tuple nearest(points_array queries, std::optional<points_array> data, double eps,
                  std::size_t k, bool include_self, const run_settings& settings);

}  // namespace epsjoin_python
