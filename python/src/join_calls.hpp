#pragma once
// The joins as the extension exposes them: numpy arrays in, numpy arrays out (owning the
// library's buffers, no copy), the GIL released while the library works.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <epsjoin/options.hpp>

namespace epsjoin_python {

namespace nb = nanobind;

/// [n x d, row-major] float32 or float64 points on the host; the Python layer has already
/// converted anything else, so these are used where they lie.
using points_array = nb::ndarray<nb::ro, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

/// What every join call takes besides the points and eps (the CLI's options, typed).
struct run_settings {
  std::string engine = "auto";
  std::string precision = "f64";
  bool approximate = false;
  unsigned threads = 0;
  int device = 0;
  /// Every device a GPU join spreads over (docs/multi-gpu.md), `device` first; empty: `device`.
  std::vector<int> devices;
  /// Each join decides whether spreading over `devices` pays (resources::devices_automatic).
  bool devices_automatic = false;
  /// How several devices divide a join: "auto", "items" or "slabs" (--devices-split).
  std::string devices_split = "auto";
  std::uint64_t host_memory_bytes = 0;
  std::uint64_t device_memory_bytes = 0;
  std::map<std::string, std::string> params;
  /// The distance (docs/metrics.md): euclidean, manhattan, chebyshev, cosine or haversine.
  std::string metric = "euclidean";
  /// haversine: "radians" or "degrees"; eps in units of a sphere of radius sphere_radius.
  std::string angles = "radians";
  double sphere_radius = 1.0;
  /// Periodic box sides (scipy's boxsize), empty for none.
  std::vector<double> box;
  /// This process's share of a counts-only self-join's work items (join_options::share):
  /// items share_index, share_index + share_count, ... (epsjoin.dask's split by items).
  unsigned share_index = 0;
  unsigned share_count = 1;
  /// progress=: a Python callable given the fraction done (0 to 1) now and then, or None.
  nb::object progress = nb::none();
};

/// The metric, angle units, sphere radius and box of `s` into `options` (invalid_argument for a
/// name the library does not know).
void set_geometry(const run_settings& s, epsjoin::join_options& options);

/// (indptr [n_queries + 1] uint64, indices [nnz] uint32, stats dict). `added_bytes_per_pair`:
/// what the caller makes of the table afterwards (a graph's data array), checked with it
/// against the memory limit before the table is allocated.
nb::tuple neighbor_table(points_array queries, std::optional<points_array> data, double eps,
                         bool include_self, bool sort_indices, const run_settings& settings,
                         double added_bytes_per_pair = 0);

/// (indptr, indices, distances [nnz] float64, stats dict): the table with each neighbour's
/// Euclidean distance, written by the engine as it finds the neighbour where it can (cpu-grid),
/// computed by the library's sink afterwards otherwise; summed in float64 in dimension order, as
/// scipy's and scikit-learn's trees sum.
nb::tuple neighbor_distance_table(points_array queries, std::optional<points_array> data,
                                  double eps, bool include_self, bool sort_indices,
                                  const run_settings& settings);

/// (pairs [m x 2] int64, stats dict): (i, j) with j > i (j >= i with include_self) for a
/// self-join, every (i, j) otherwise; sorted by (i, j) when `sort`, else in no particular order.
/// The library's pairs_array_sink makes them (include/epsjoin/pairs_array.hpp): with `once`,
/// engines that find each pair once or hand over pairs write them in place (unsorted) or they
/// are grouped by i (sorted, one thread); the others' rows are cut. Without `once`, always the
/// rows.
nb::tuple pairs_from_rows(points_array queries, std::optional<points_array> data, double eps,
                          bool include_self, bool sort, const run_settings& settings,
                          bool once = true);

/// (total ordered pairs, per-query counts [n_queries] uint64 or None, stats dict)
/// (per_query [n_queries x radii] uint32, totals [radii] uint64, stats dict): neighbours within
/// each radius, from one join at the largest (epsjoin::count_within_radii); radii_call.cpp.
nb::tuple neighbor_counts_radii(points_array queries, std::optional<points_array> data,
                                nb::ndarray<nb::ro, double, nb::ndim<1>, nb::c_contig> radii,
                                bool include_self, const run_settings& settings);

nb::tuple neighbor_counts(points_array queries, std::optional<points_array> data, double eps,
                          bool include_self, bool per_row, const run_settings& settings);

/// The join written to `path` by the library's file sinks (stats dict): "csr" the binary CSR
/// table (rows sorted when `sort`), "npy" or "csv" the pairs as they come, each unordered pair
/// once in a self-join. The file appears under `path` only when complete.
nb::object join_to_file(points_array queries, std::optional<points_array> data, double eps,
                        bool include_self, const std::string& path, const std::string& format,
                        bool sort, const run_settings& settings);

/// (coordinate cut, ascending cuts [slabs - 1], estimated work, sample points, sample seconds):
/// plan_from_sample on take_sample(points, sample_size), standing for n_points points;
/// partition_call.cpp.
nb::tuple plan_slabs(points_array points, std::size_t sample_size, std::size_t n_points,
                     double eps, std::size_t slabs, double point_cost, const run_settings& s);

/// n float64 ones (scikit-learn's connectivity data), filled on `threads` threads (0: all): a
/// fresh array of hundreds of MB costs its page faults, which numpy's ones takes on one thread.
nb::object filled_ones(std::size_t n, unsigned threads);

}  // namespace epsjoin_python
