#pragma once
// The oracle's distance of a pair and its decision at a radius, by the oracle's own expressions
// (reported_square / reported_distance for Euclidean, metric_value for the others), for the
// tests of what ranks neighbours by distance (the k nearest, OPTICS).

#include <cstddef>
#include <vector>

#include "base/within_eps.hpp"
#include "core/metric_join.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"

namespace epsjoin::test {

/// The Euclidean distance, or the metric's value (for haversine, on the unit sphere).
inline double oracle_distance(const join_options& o, dataset_view a, std::size_t i, dataset_view b,
                              std::size_t j) {
  if (o.metric == distance_metric::euclidean) {
    return detail::reported_distance(a.d, [&](std::size_t c) { return a.at(i, c) - b.at(j, c); });
  }
  std::vector<double> x(a.d), y(a.d);
  for (std::size_t c = 0; c < a.d; ++c) {
    x[c] = a.at(i, c);
    y[c] = b.at(j, c);
  }
  return detail::metric_value(o, x.data(), y.data(), a.d);
}

/// Whether the pair is within o.eps as the joins decide it (Euclidean: the squared sum).
inline bool oracle_within(const join_options& o, dataset_view a, std::size_t i, dataset_view b,
                          std::size_t j) {
  if (o.metric == distance_metric::euclidean) {
    return detail::reported_square(a.d, [&](std::size_t c) { return a.at(i, c) - b.at(j, c); }) <=
           o.eps * o.eps;
  }
  return oracle_distance(o, a, i, b, j) <= detail::metric_limit(o, o.eps);
}

}  // namespace epsjoin::test
