#pragma once
/// @file radii.hpp
/// @brief Neighbour counts within several radii in one join (scipy's count_neighbors with an
/// array of r, per query point).
///
/// @code
///   std::vector<double> r = {0.01, 0.02, 0.05};
///   epsjoin::radii_counts c = epsjoin::count_within_radii(res, points.view(), opt, r);
///   // c.per_query[i * r.size() + k]: neighbours of point i within r[k] (self excluded)
/// @endcode

#include <cstdint>
#include <span>
#include <vector>

#include "epsjoin/join.hpp"

namespace epsjoin {

/// @brief What count_within_radii returns.
struct radii_counts {
  std::vector<double> radii;              ///< as given
  std::vector<std::uint64_t> totals;      ///< [radii] ordered pairs (i != j in a self-join)
  std::vector<std::uint32_t> per_query;   ///< [n_queries x radii], row-major
  join_stats stats;                       ///< of the one join, at the largest radius
};

/// @brief Per-query neighbour counts within each of `radii` (each finite, > 0, any order), from
/// one join at the largest in options.metric (and options.box); options.eps is ignored. Each
/// pair found is measured once more in float64 by the oracle's expression of the metric and
/// counted under every radius it lies within, so the counts equal separate joins' at each radius.
radii_counts count_within_radii(resources& res, dataset_view points, const join_options& options,
                                std::span<const double> radii);
/// @brief The same for queries A against indexed points B.
radii_counts count_within_radii(resources& res, dataset_view queries, dataset_view data,
                                const join_options& options, std::span<const double> radii);

}  // namespace epsjoin
