#pragma once
// Periodic boxes on any engine: the points near a face are copied across it (images), the engine
// joins the original queries against points and images at a radius a hair wider than eps, and
// each delivered pair is kept only when it came through the minimum image (so every pair comes
// once, eps = side / 2 included) and re-checked in float64 by the minimum-image distance, the
// oracle's expression: the result equals brute-cpu's (docs/metrics.md).

#include <cstdint>
#include <vector>

#include "core/memory_budget.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin::detail {

/// The points of `data` (float64) followed by their images within `reach` of a face, each image
/// shifted by one side in each dimension where the point lies within `reach` of that face.
struct periodic_images {
  dataset points;
  std::vector<std::uint32_t> original;  ///< [images]: the point an image copies
  std::size_t n_original = 0;
};

/// The radius the engine joins at: eps widened past the rounding of shifted coordinates and the
/// engine's band, so no pair of the minimum-image metric is lost.
double periodic_engine_radius(const join_options& options, std::size_t d, double engine_band);

/// Builds the images; refuses with the bytes needed when they would not fit `budget`.
periodic_images make_periodic_images(const join_options& options, dataset_view data,
                                     double reach, const memory_budget& budget);

/// Maps (query, point or image) pairs back to (query, point), keeps each pair once (through its
/// minimum image), drops self pairs of a self-join, and re-checks the minimum-image distance.
class periodic_filter_sink final : public result_sink {
 public:
  periodic_filter_sink(result_sink& inner, const join_options& options, dataset_view queries,
                       const periodic_images& images, bool self_join);
  void consume(std::span<const index_pair> pairs) override;
  std::uint64_t candidates() const { return candidates_.load(); }

 private:
  bool keep(std::uint32_t q, std::uint32_t a, std::uint32_t j) const;
  double value(const double* a, const double* b) const;  // the metric's accumulated value

  result_sink& inner_;
  distance_metric metric_;
  std::vector<double> box_;
  double limit_;  // eps^2 (euclidean) or eps
  dataset queries_f64_;
  const double* queries_;
  const periodic_images& images_;
  std::size_t d_;
  bool self_join_;
  std::atomic<std::uint64_t> candidates_{0};
};

}  // namespace epsjoin::detail
