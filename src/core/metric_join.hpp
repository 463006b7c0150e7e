#pragma once
// Metrics beyond the engines' own: cosine and haversine run on any Euclidean engine as a join of
// unit vectors at a widened Euclidean radius, L1 and L-infinity as a Euclidean join of the points
// themselves at the radius of a ball that holds the metric's, every delivered pair then
// re-checked in float64 in the metric itself (docs/metrics.md derives the radii). Also the options' validation for every
// metric and the periodic box, done once in dispatch.

#include <cstdint>
#include <span>
#include <vector>

#include "epsjoin/join.hpp"

namespace epsjoin::detail {

/// Throws invalid_argument for options that do not fit together or with the data: angles or
/// sphere_radius outside haversine, a box of the wrong length, a side <= 0, eps > side / 2, a
/// coordinate outside [0, side), haversine with d != 2 or |latitude| > 90 degrees, cosine with
/// a zero row. `what` names the point set in messages.
void validate_metric_options(const join_options& options, std::size_t d);
void validate_metric_points(const join_options& options, dataset_view points, const char* what);

/// True for the metrics dispatch runs through unit vectors on an engine that lacks them.
constexpr bool joins_unit_vectors(distance_metric m) {
  return m == distance_metric::cosine || m == distance_metric::haversine;
}

/// True for the metrics dispatch runs on an engine that lacks them as a Euclidean join of the
/// points at the radius of a ball holding the metric's: L1's ball of radius eps lies in the
/// Euclidean one of radius eps, L-infinity's in the one of radius eps sqrt(d).
constexpr bool joins_enclosing_ball(distance_metric m) {
  return m == distance_metric::manhattan || m == distance_metric::chebyshev;
}

/// True for the metrics any Euclidean engine runs, through unit vectors or an enclosing ball.
constexpr bool runs_on_euclidean(distance_metric m) {
  return joins_unit_vectors(m) || joins_enclosing_ball(m);
}

/// The Euclidean radius, as an engine of relative error band `engine_band` computes it in the
/// options' precision, within which lies every pair that the L1 or L-infinity re-check accepts,
/// for d dimensions and coordinates of magnitude at most `largest_magnitude` (which bounds what
/// rounding them to float32 moves).
double enclosing_ball_radius(const join_options& options, std::size_t d, double engine_band,
                             double largest_magnitude);

/// The largest |coordinate| of `points`, on `threads` threads.
double largest_magnitude(dataset_view points, unsigned threads);

/// The unit vectors of `points` (d columns for cosine, 3 for haversine), float64.
dataset unit_vectors(const join_options& options, dataset_view points, unsigned threads);

/// The Euclidean radius between unit vectors that every pair the re-check accepts lies within,
/// as computed by an engine of relative error band `engine_band` in `precision`, for d input
/// dimensions.
double unit_vector_radius(const join_options& options, std::size_t d, double engine_band);

/// The value the oracle compares for rows a and b in the options' metric and box: the squared
/// distance (euclidean), the distance in radians (haversine), else the distance; by its
/// expressions, in its order. Within radius r means value <= metric_limit(options, r).
double metric_value(const join_options& options, const double* a, const double* b, std::size_t d);
double metric_limit(const join_options& options, double r);

/// Passes on, as pairs, only the pairs within eps in the metric: the engine sees a sink that
/// takes pairs (no counts, no rows), so every pair it finds is checked here, and `inner`
/// (counts, rows, pairs or a file) receives exactly the pairs of the metric. The check is the
/// oracle's expression in float64, in its order; what depends on one row only (cosine: the row's
/// power-of-two scale and scaled sum of squares; haversine: its angles in radians and the cosine
/// of its latitude) is computed once per row, the same values the oracle computes per pair.
class metric_filter_sink final : public result_sink {
 public:
  metric_filter_sink(result_sink& inner, const join_options& options, dataset_view queries,
                     dataset_view data, unsigned threads);
  void begin(const sink_info&) override {}
  void consume(std::span<const index_pair> pairs) override;
  void finish() override {}
  std::uint64_t candidates() const { return candidates_; }

 private:
  static constexpr std::size_t terms_per_row = 3;
  bool within(std::uint32_t q, std::uint32_t j) const;

  result_sink& inner_;
  const join_options& options_;  // the caller's: they outlive the filter
  distance_metric metric_;
  double eps_;
  std::size_t d_;
  dataset queries_f64_, data_f64_;  // float64 copies of float32 input, else empty
  const double* queries_;
  const double* data_;
  std::vector<double> query_terms_, data_terms_;  // terms_per_row a row
  const double* data_terms_of_ = nullptr;         // data_terms_, or query_terms_ in a self-join
  std::atomic<std::uint64_t> candidates_{0};
};

}  // namespace epsjoin::detail
