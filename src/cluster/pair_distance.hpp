#pragma once
// The distance of a pair as a distance graph reports it, for what ranks neighbours by distance
// (nearest_sink, OPTICS): Euclidean to the last bit of the host table's (reported_distance),
// other metrics by the oracle's expression (haversine on the sphere of the options' radius).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/within_eps.hpp"
#include "core/metric_join.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"

namespace epsjoin::detail {

class pair_distance {
 public:
  /// `queries` and `data`: host points (the same view for a self-join), alive while used.
  pair_distance(dataset_view queries, dataset_view data, const join_options& options)
      : queries_(queries), data_(data), options_(options) {
    options_.progress = {};
    plain_ = options.metric == distance_metric::euclidean && options.box.empty();
    rows_f64_ = plain_ && queries.type == scalar_type::f64 && data.type == scalar_type::f64;
  }

  double operator()(std::uint32_t q, std::uint32_t j) const {
    const std::size_t d = data_.d;
    if (rows_f64_) {  // the common case, read straight from the rows
      const double* x = static_cast<const double*>(queries_.data) + std::size_t{q} * d;
      const double* y = static_cast<const double*>(data_.data) + std::size_t{j} * d;
      return reported_distance(d, [&](std::size_t c) { return x[c] - y[c]; });
    }
    if (plain_) {
      return reported_distance(d,
                               [&](std::size_t c) { return queries_.at(q, c) - data_.at(j, c); });
    }
    thread_local std::vector<double> a, b;
    a.resize(d);
    b.resize(d);
    for (std::size_t c = 0; c < d; ++c) {
      a[c] = queries_.at(q, c);
      b[c] = data_.at(j, c);
    }
    const double value = metric_value(options_, a.data(), b.data(), d);
    if (options_.metric == distance_metric::euclidean) return std::sqrt(value);
    return options_.metric == distance_metric::haversine ? value * options_.sphere_radius : value;
  }

 private:
  dataset_view queries_, data_;
  join_options options_;
  bool plain_ = false, rows_f64_ = false;
};

}  // namespace epsjoin::detail
