#pragma once
/// @file dbscan.hpp
/// @brief DBSCAN clustering on the ε-join, without storing any neighbourhood.
///
/// Two joins run through sinks: the first counts each point's neighbours (which gives the core
/// points), the second streams pairs into a concurrent union-find over the core points and a
/// per-point minimum over core neighbours (which places the border points). Memory beyond the
/// join's own index is O(N): no neighbour table is ever built. cpu-grid in one to three
/// dimensions runs no join at all but clusters on its own cells (`dbscan_options::cell_merge`).
/// @code
///   epsjoin::resources res;
///   epsjoin::dbscan_options opt;
///   opt.engine = "cpu-grid";
///   epsjoin::dbscan_result r = epsjoin::dbscan(res, points.view(), 0.3, 5, opt);
///   // r.labels[i]: cluster of point i (0, 1, ...) or -1 for noise; r.core[i] != 0 for core points
/// @endcode

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/stats.hpp"

namespace epsjoin {

/// @brief How the joins under DBSCAN run; the same choices as `join_options`.
struct dbscan_options {
  /// Registered engine name, or "auto" (see `engines()`).
  std::string engine = "auto";
  /// Precision of the distance computation, as in `join_options::precision`.
  scalar_type precision = scalar_type::f64;
  /// Engine-specific parameters, as in `join_options::params`.
  std::map<std::string, std::string> params;
  /// The distance, as in `join_options::metric` (docs/metrics.md). The cell merge and the
  /// device merge are Euclidean only; other metrics take the two joins into host sinks.
  distance_metric metric = distance_metric::euclidean;
  /// [host] [n] weight of each point, or empty for 1 each (scikit-learn's sample_weight): a
  /// point is core when the weights of the points within eps, its own included, sum to at least
  /// min_samples. Weights may be negative or 0 and must be finite. Weighted counts take the two
  /// joins into host sinks (8 more bytes a point), on any engine.
  std::span<const double> sample_weight;
  /// Called now and then with the fraction done over both passes, in [0, 1]; may be empty.
  std::function<void(double)> progress;
  /// Whether a row-filling GPU engine (lbjoin, gds-join, ted-join, meta-16q, meta-1q) may merge
  /// on the device: one index for both passes, the union-find and the labels on the GPU, only
  /// the labels and core flags copied back. false keeps every engine on the host merge (the
  /// same labels; for comparison).
  bool device_merge = true;
  /// Whether cpu-grid (named, or `auto`'s choice) may cluster on its own grid of cells of side
  /// eps/sqrt(d) in 1 to 3 dimensions, with no pair join: a cell of at least min_samples points
  /// is all core with no distance computed, other points count neighbours only up to
  /// min_samples, the union-find runs over cells, and two neighbouring cells are merged on the
  /// first core pair found within eps. Not with engine parameters (they set up the joins).
  /// false keeps the two joins (the same labels; for comparison).
  bool cell_merge = true;
};

/// @brief The clustering and what it cost.
struct dbscan_result {
  /// [n] the cluster of each point, or -1 for noise. Clusters are numbered 0, 1, ... in the
  /// order of their smallest core point index, as scikit-learn numbers them: the core points
  /// read in input order first meet 0, then 1, and so on (a border point before its cluster's
  /// first core point may carry a larger number than clusters met later).
  std::vector<std::int64_t> labels;
  /// [n] 1 for a core point (at least min_samples points, itself included, within eps), else 0.
  std::vector<std::uint8_t> core;
  std::size_t n_clusters = 0;
  std::size_t n_core = 0;
  /// Points that are not core but have a core point within eps.
  std::size_t n_border = 0;
  std::size_t n_noise = 0;
  /// The engine the joins ran on (never "auto"); empty only when no join was needed (no points
  /// and min_samples 1).
  std::string engine;
  /// Ordered neighbour pairs i != j within eps (the count pass's |R|); 0 from the cell merge,
  /// whose counts stop at min_samples.
  std::uint64_t pairs = 0;
  /// Where the clusters were merged: "device" (the rows never left the GPU; one join whose
  /// counting pass gives the core points and whose filling pass feeds a union-find on the
  /// device), "cells" (cpu-grid's cells, no pair join: see `dbscan_options::cell_merge`),
  /// "host" (two joins into host sinks), or empty when no join was needed.
  std::string merge;
  /// "count" (the counting join or pass; for the cell merge the grid and the core points),
  /// "merge" (the pair join or filling pass with the union-find; for the cell merge the
  /// cells' union-find and the border points), "label".
  std::vector<stage_time> stages;
  /// What the joins' engines noted (stages, kernel times, segments), for diagnosis; the
  /// device merge's only.
  std::vector<std::pair<std::string, std::string>> notes;
  /// Wall time of the whole call.
  double seconds = 0.0;
};

/// @brief DBSCAN of `points` with radius `eps` and density threshold `min_samples`.
///
/// A point is core when at least `min_samples` points (itself included, as scikit-learn counts)
/// lie within `eps` (squared distance <= eps^2), or with `options.sample_weight` when their
/// weights sum to at least `min_samples`. Core points within eps of each other share a
/// cluster. A non-core point with a core point within eps is a border point: it joins the
/// cluster of its core neighbour of smallest index, so every engine and every run gives the same
/// labels (scikit-learn gives it the cluster of smallest number among its core neighbours'; the
/// two differ only for a border point within eps of two clusters). Other points are noise (-1). Host memory beyond the joins' own: 17 bytes a point
/// (9 on the device merge, which takes 17 bytes a point of device memory). The cell merge
/// builds no join index; it plans within 42 + 8 d bytes a point and 24 + 16 d a non-empty cell
/// (at most one a point) and runs the joins instead where that does not fit.
/// @param res         execution resources; its memory limits bound both joins
/// @param points      [host or device] [n x d, row-major] points; n <= 2^32 - 1. Points in
///                    device memory are clustered by a row-filling GPU engine merging on the
///                    device, or, weighted and Euclidean, by any GPU or tensor engine through
///                    the host merge (whose sinks read ids, never points).
/// @param eps         the radius (never its square); finite and > 0
/// @param min_samples at least 1
/// @param options     engine, precision, parameters, progress
/// @throws invalid_argument for a bad eps, min_samples of 0, sample weights that are not finite or
///         not one a point, or anything `self_join` rejects;
///         unavailable for an engine not built in or without its device.
dbscan_result dbscan(resources& res, dataset_view points, double eps, std::size_t min_samples,
                     const dbscan_options& options = {});

/// @brief The same on an owning dataset.
inline dbscan_result dbscan(resources& res, const dataset& points, double eps,
                            std::size_t min_samples, const dbscan_options& options = {}) {
  return dbscan(res, points.view(), eps, min_samples, options);
}

}  // namespace epsjoin
