#pragma once
// DBSCAN as the extension exposes it: the library's label and core arrays handed to numpy
// without a copy.

#include <cstdint>
#include <optional>

#include "device_calls.hpp"
#include "join_calls.hpp"

namespace epsjoin_python {

/// [n] float64 sample weights (dbscan_options::sample_weight).
using weights_array = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// (labels [n] int64, core [n] uint8, stats dict: engine, n_clusters, n_core, n_border,
/// n_noise, pairs, stages, seconds and the call's n, d, eps, min_samples, precision), in the
/// settings' metric, weighted by `weights` when given.
nb::tuple dbscan(points_array points, double eps, std::uint64_t min_samples,
                 const run_settings& settings, std::optional<weights_array> weights);

/// dbscan of points in CUDA device memory, clustered on their device (labels and core flags
/// come back to the host: 9 bytes a point; the points never do). With host `weights`, the
/// pairs come to the host merge (the points still stay on the device).
nb::tuple dbscan_device(device_points points, double eps, std::uint64_t min_samples,
                        const run_settings& settings, std::optional<weights_array> weights);

}  // namespace epsjoin_python
