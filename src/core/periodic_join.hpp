#pragma once
// Periodic boxes on any engine, in two joins: the plain join finds every pair whose minimum image
// is the pair itself (no gap over half a side: the plain distance is the periodic one); for the
// others, the points near a face are copied across it (images), the original queries are joined
// against the images at a radius a hair wider than eps, and each pair is kept only when it came
// through its minimum image (so it comes once, eps = side / 2 included) and re-checked in float64
// by the oracle's minimum-image expression: the result equals brute-cpu's (docs/metrics.md).

#include <cstdint>
#include <span>
#include <vector>

#include "base/memory_budget.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin::detail {

/// The images of the points of `data` within `reach` of a face (float64), each shifted by one
/// side in each dimension where the point lies within `reach` of that face.
struct periodic_images {
  dataset points;
  std::vector<std::uint32_t> original;  ///< [images]: the point an image copies
};

/// The radius the engine joins at: eps widened past the rounding of shifted coordinates and the
/// engine's band, so no pair of the minimum-image metric is lost.
double periodic_engine_radius(const join_options& options, std::size_t d, double engine_band);

/// The points within `reach` of a face in some dimension, in increasing order, found on
/// `threads` threads: the points that have images, and the queries that can meet one (an image
/// lies outside the box, and every metric's distance is at least one dimension's gap).
std::vector<std::uint32_t> points_near_faces(const join_options& options, dataset_view points,
                                             double reach, unsigned threads);

/// Builds the images of the points `near` (points_near_faces of `data`); refuses with the bytes
/// needed when they would not fit `budget`.
periodic_images make_periodic_images(const join_options& options, dataset_view data,
                                     std::span<const std::uint32_t> near, double reach,
                                     const memory_budget& budget);

/// The queries that can meet an image, gathered in float64, with the ids they have in the
/// caller's queries.
struct periodic_queries {
  dataset points;
  std::vector<std::uint32_t> original;  ///< [subset]: the query a row of `points` is
};

periodic_queries gather_queries(dataset_view queries, std::vector<std::uint32_t> ids,
                                const memory_budget& budget);

/// Maps (query, image) pairs back to (query, point), keeps a pair only where the image is its
/// minimum image, and re-checks the minimum-image distance.
class periodic_filter_sink final : public result_sink {
 public:
  periodic_filter_sink(result_sink& inner, const join_options& options, dataset_view queries,
                       dataset_view data, const periodic_images& images,
                       const periodic_queries& near_faces);
  void consume(std::span<const index_pair> pairs) override;
  std::uint64_t candidates() const { return candidates_.load(); }

 private:
  bool keep(std::uint32_t q, std::uint32_t image, std::uint32_t j) const;
  double value(const double* a, const double* b) const;  // the metric's accumulated value

  result_sink& inner_;
  distance_metric metric_;
  std::vector<double> box_;
  double limit_;  // eps^2 (euclidean) or eps
  dataset queries_f64_, data_f64_;
  const double* queries_;
  const double* data_;
  const periodic_images& images_;
  const periodic_queries& near_faces_;
  std::size_t d_;
  std::atomic<std::uint64_t> candidates_{0};
};

}  // namespace epsjoin::detail
