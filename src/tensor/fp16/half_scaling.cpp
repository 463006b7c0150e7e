#include <algorithm>
#include <cmath>
#include <mutex>

#include "base/parallel.hpp"
#include "tensor/fp16/half_bound.hpp"

namespace epsjoin::detail::fp16 {

namespace {

constexpr std::size_t points_per_chunk = 16384;

/// Calls `apply(worker, k, value)` for every coordinate of `set`, in parallel.
template <class Apply>
void for_each_coordinate(dataset_view set, unsigned threads, Apply&& apply) {
  parallel_for(threads, set.n, points_per_chunk,
               [&](std::size_t begin, std::size_t end, unsigned worker) {
                 for (std::size_t i = begin; i < end; ++i)
                   for (std::size_t k = 0; k < set.d; ++k) apply(worker, k, set.at(i, k));
               });
}

}  // namespace

half_scaling choose_half_scaling(dataset_view a, dataset_view b, unsigned threads) {
  const std::size_t d = a.d;
  threads = std::max(threads, 1u);
  half_scaling s;
  s.center.assign(d, 0.0);
  const std::size_t n = a.n + b.n;
  if (n == 0 || d == 0) return s;

  // Per-worker partial sums, added in worker order: the centre does not depend on the schedule
  // beyond FP64 rounding, and any centre gives a valid bound.
  std::vector<std::vector<double>> sums(threads, std::vector<double>(d, 0.0));
  for (const dataset_view set : {a, b}) {
    for_each_coordinate(set, threads,
                        [&](unsigned w, std::size_t k, double v) { sums[w][k] += v; });
  }
  for (const auto& partial : sums)
    for (std::size_t k = 0; k < d; ++k) s.center[k] += partial[k];
  for (double& c : s.center) c /= static_cast<double>(n);

  std::vector<double> spread(threads, 0.0);
  for (const dataset_view set : {a, b}) {
    for_each_coordinate(set, threads, [&](unsigned w, std::size_t k, double v) {
      // Halved: the difference of two finite doubles can overflow, its half cannot.
      spread[w] = std::max(spread[w], std::abs(0.5 * v - 0.5 * s.center[k]));
    });
  }
  const double largest = *std::max_element(spread.begin(), spread.end());
  if (!(largest > 0) || !std::isfinite(largest)) return s;
  s.exponent = half_exponent_for(largest);
  return s;
}

}  // namespace epsjoin::detail::fp16
