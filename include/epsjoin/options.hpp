#pragma once
/// @file options.hpp
/// @brief What a join computes and which engine computes it.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin {

/// @brief How the distance between two points is measured (docs/metrics.md).
enum class distance_metric {
  euclidean,  ///< sqrt(sum (a_k - b_k)^2), the default
  manhattan,  ///< sum |a_k - b_k| (L1, scipy's p = 1)
  chebyshev,  ///< max |a_k - b_k| (L-infinity, scipy's p = inf)
  cosine,     ///< 1 - a.b / (|a| |b|): eps is a cosine distance in [0, 2]; no zero rows
  haversine,  ///< great-circle angle between (latitude, longitude) rows (d = 2); eps in radians
              ///< or, with sphere_radius, in that radius' units
};

/// @brief The metric's name as the CLI and Python spell it ("euclidean", "manhattan", ...).
std::string_view to_string(distance_metric m);
/// @brief The metric called `name` (also "l2", "l1", "linf", "cityblock", "great-circle"), or
/// nullopt.
std::optional<distance_metric> parse_metric(std::string_view name);

/// @brief How haversine's latitude and longitude are given.
enum class angle_unit { radians, degrees };

/// @brief One process's share of a counts-only join that several processes run whole, each on
/// all the points (mpi-join's work-items split): it counts work items index, index + count,
/// index + 2 count, ... of the join's workload order, which every process builds alike from the
/// same points and options, so the shares' counts (total and per point) add up to the join's.
/// Self pairs (include_self) belong to share 0. Only engines with engine_info::shares_work_items,
/// a counts-only sink, the euclidean metric and no periodic box.
struct work_items_share {
  unsigned index = 0;
  unsigned count = 1;  ///< 1: the whole join
};

/// @brief Options of one join. Only `eps` has no usable default.
/// @code
///   epsjoin::join_options opt;
///   opt.eps = 0.01;          // the radius; pairs with squared distance <= eps * eps
///   opt.engine = "auto";
/// @endcode
struct join_options {
  /// Radius (never its square). Must be finite and > 0.
  double eps = 0.0;
  /// Registered engine name, or "auto" to let epsjoin pick (see `engines()`).
  std::string engine = "auto";
  /// Precision of the distance computation. Engines that cannot honour f32 compute in f64.
  scalar_type precision = scalar_type::f64;
  /// Let engines with an approximate mode (ted-join, meta-16q, meta-1q, gds-join with
  /// arithmetic=fp16|fp16-fp32) skip their exactness re-check,
  /// as the papers' implementations do; they then report their accuracy against the direct
  /// formula in the run's stats. Exact engines ignore it.
  bool approximate = false;
  /// The distance (docs/metrics.md). Engines declare the metrics they compute natively
  /// (engine_info::metrics); cosine and haversine also run on every Euclidean engine through unit
  /// vectors, each delivered pair re-checked in float64 in the metric itself.
  distance_metric metric = distance_metric::euclidean;
  /// haversine only: the unit of the latitude/longitude columns.
  angle_unit angles = angle_unit::radians;
  /// haversine only: eps is in the units of a sphere of this radius (eps / sphere_radius radians).
  double sphere_radius = 1.0;
  /// Periodic box (scipy's boxsize): empty for none, else one side length > 0 per dimension;
  /// coordinates must lie in [0, side) and distances are by the minimum image. eps at most half
  /// the smallest side. Only engines with engine_info::periodic take it.
  std::vector<double> box;
  /// Self-join only: also report (i, i) for every point.
  bool include_self = false;
  /// This process's share of the work items; the default is the whole join.
  work_items_share share;
  /// Engine-specific tuning as key=value strings (for example "pattern" -> "lid-unicomp").
  /// An engine rejects keys it does not know with invalid_argument, so typos are not ignored.
  std::map<std::string, std::string> params;
  /// Called now and then with the fraction of the work done, in [0, 1]; may be empty.
  /// Called from the thread that runs the join, about ten times a second, also where the
  /// fraction does not move (it repeats; 1 comes once, last). It is also the way
  /// to cancel: an exception it throws stops the join, which frees what it holds and rethrows
  /// it from self_join / join (the Python package turns Ctrl-C into KeyboardInterrupt so).
  std::function<void(double)> progress;
};

}  // namespace epsjoin
