#pragma once
// DBSCAN as the extension exposes it: the library's label and core arrays handed to numpy
// without a copy.

#include <cstdint>

#include "join_calls.hpp"

namespace epsjoin_python {

/// (labels [n] int64, core [n] uint8, stats dict: engine, n_clusters, n_core, n_border,
/// n_noise, pairs, stages, seconds and the call's n, d, eps, min_samples, precision)
nb::tuple dbscan(points_array points, double eps, std::uint64_t min_samples,
                 const run_settings& settings);

}  // namespace epsjoin_python
