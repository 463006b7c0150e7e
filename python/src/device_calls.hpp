#pragma once
// The joins of points already in CUDA device memory (CuPy arrays, CUDA tensors, anything with
// __dlpack__ on a CUDA device): the library reads them where they lie and leaves the CSR table
// on the device; what comes back are DLPack-capable arrays over that table (no copy), which the
// Python layer hands to CuPy or PyTorch.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>

#include "join_calls.hpp"

namespace epsjoin_python {

/// [n x d, row-major] float32 or float64 points on a CUDA device.
using device_points = nb::ndarray<nb::ro, nb::ndim<2>, nb::c_contig, nb::device::cuda>;

/// The library's view of `points`, where they lie.
epsjoin::dataset_view device_view_of(const device_points& points);

/// `s` for a call on the points' device `device`, and on it alone (points in device memory are
/// not spread over several devices).
run_settings on_points_device(const run_settings& s, int device);

/// (indptr [n_queries + 1] int64, indices [nnz] int32, distances [nnz] float64 or None, stats
/// dict), all on the points' device; rows sorted by id when `sort` asks, each entry's distance
/// when `distances` does (the library's device table assembly: epsjoin/device_table.hpp).
/// The ids are the library's uint32 read as int32: the Python layer refuses more than 2^31 - 1
/// points first.
nb::tuple device_neighbor_table(device_points queries, std::optional<device_points> data,
                                double eps, bool include_self, bool sort, bool distances,
                                const run_settings& settings);

/// (pairs [n x 2] int64, stats dict) on the points' device: a self-join's unique pairs
/// (i < j, or i <= j with include_self), every (query, point) pair of an A x B join; in
/// lexicographic order when `sort` asks.
nb::tuple device_neighbor_pairs(device_points queries, std::optional<device_points> data,
                                double eps, bool include_self, bool sort,
                                const run_settings& settings);

/// (total ordered pairs, per-query counts [n_queries] uint64 on the host or None, stats dict).
nb::tuple device_neighbor_counts(device_points queries, std::optional<device_points> data,
                                 double eps, bool include_self, bool per_row,
                                 const run_settings& settings);

}  // namespace epsjoin_python
