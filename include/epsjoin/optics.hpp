#pragma once
/// @file optics.hpp
/// @brief OPTICS (Ankerst et al., 1999) on the ε-join: the reachability ordering of the points
/// within a largest radius max_eps, as scikit-learn's `OPTICS` computes it.
///
/// One self-join at max_eps gives every point's neighbour ids (a CSR table in host memory,
/// 4 bytes a pair, checked against the memory limit before it is made). Each row's distances
/// give its core distance (the distance of its min_samples-th nearest point, itself the first);
/// then the points are ordered by a priority queue of reachabilities, each processed point
/// relaxing its unprocessed neighbours. All three run on a copy of the points renumbered along
/// a grid of cells (Euclidean, L1, L-infinity), so that neighbours lie near each other in
/// memory; the result is in the caller's indices, ties decided by them. The clusters are
/// extracted from the result (Python's `epsjoin.OPTICS`; `optics_dbscan_labels` here).
/// @code
///   epsjoin::resources res;
///   epsjoin::optics_result r = epsjoin::optics(res, points.view(), 0.5, 10);
///   // r.ordering: the points in OPTICS order; r.reachability[i], r.core_distances[i] by point
/// @endcode

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/stats.hpp"

namespace epsjoin {

/// @brief How the join under OPTICS runs; the same choices as `join_options`.
struct optics_options {
  std::string engine = "auto";
  scalar_type precision = scalar_type::f64;
  std::map<std::string, std::string> params;
  distance_metric metric = distance_metric::euclidean;
  /// Called now and then with the fraction done, in [0, 1]; what it throws stops the run.
  std::function<void(double)> progress;
};

/// @brief The reachability plot and what it cost.
struct optics_result {
  /// [n] the points in the order OPTICS visits them.
  std::vector<std::uint32_t> ordering;
  /// [n] by point: the smallest reachability distance any earlier point gave it,
  /// max(core distance of that point, distance); infinity where none did (the first point of
  /// each connected part).
  std::vector<double> reachability;
  /// [n] by point: the distance of its min_samples-th nearest point (itself the first), or
  /// infinity where fewer than min_samples points lie within max_eps.
  std::vector<double> core_distances;
  /// [n] by point: the point that gave it its reachability, -1 where none did.
  std::vector<std::int64_t> predecessor;
  std::string engine;
  std::uint64_t pairs = 0;  ///< ordered neighbour pairs i != j within max_eps
  /// "join" (the table), "core" (the core distances), "order" (the priority queue).
  std::vector<stage_time> stages;
  double seconds = 0.0;
};

/// @brief OPTICS of `points` within `max_eps`.
///
/// The next point is always the unprocessed one of smallest reachability, equal
/// reachabilities by smallest index, and a point of infinite reachability (a new start) the
/// unprocessed one of smallest index: scikit-learn's order. A processed core point lowers an
/// unprocessed neighbour's reachability only to a strictly smaller value. Distances are exact
/// (the Euclidean ones a distance graph reports, to the last bit); scikit-learn rounds its own
/// to 15 decimals, so the two agree to about 1e-15 and order alike on data without such
/// near-ties.
/// @param points      [host] [n x d, row-major]; n <= 2^32 - 1
/// @param max_eps     finite and > 0: neighbours beyond it are not considered
/// @param min_samples at least 1 (1: every core distance is 0)
/// @throws invalid_argument for a bad max_eps or min_samples of 0, or anything `self_join`
///         rejects; out_of_memory when the table would not fit the memory limit.
optics_result optics(resources& res, dataset_view points, double max_eps, std::size_t min_samples,
                     const optics_options& options = {});

/// @brief DBSCAN's clusters at `eps` (<= the run's max_eps) read off the reachability plot, as
///        scikit-learn's `cluster_optics_dbscan`: walking the ordering, a point whose
///        reachability exceeds eps starts a new cluster if its core distance is at most eps,
///        else it is noise (-1); every other point joins the cluster last started (-1 before
///        the first). Clusters are numbered 0, 1, ... in the order they start.
std::vector<std::int64_t> optics_dbscan_labels(const optics_result& plot, double eps);

}  // namespace epsjoin
