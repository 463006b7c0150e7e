#include "base/float_band.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/within_eps.hpp"

namespace epsjoin::detail::cpu {

thresholds<float> float_thresholds(double eps, std::size_t d, std::span<const double> rounding_a,
                                   std::span<const double> rounding_b) {
  double r2 = 0;
  for (std::size_t j = 0; j < d; ++j) {
    const double r = std::max(j < rounding_a.size() ? rounding_a[j] : 0.0,
                              j < rounding_b.size() ? rounding_b[j] : 0.0);
    r2 += r * r;
  }
  const double delta = 2.0 * std::sqrt(r2) * (1.0 + 0x1p-40);
  const double gamma = static_cast<double>(d + 3) * 0x1p-24 * 1.01;
  const double tiny = static_cast<double>(d + 2) * 0x1p-146;
  double lo = eps > delta ? (1.0 - gamma) * (eps - delta) * (eps - delta) * (1 - 0x1p-50) - tiny
                          : -1.0;
  double hi = (1.0 + gamma) * (eps + delta) * (eps + delta) * (1 + 0x1p-50) + tiny;
  constexpr double fmax = std::numeric_limits<float>::max();
  thresholds<float> t{};
  // Round lo down and hi up when converting, so the float thresholds stay on the safe side.
  if (lo >= fmax) {
    t.lo = std::numeric_limits<float>::max();
  } else {
    t.lo = static_cast<float>(lo);
    if (static_cast<double>(t.lo) > lo) t.lo = std::nextafter(t.lo, -INFINITY);
  }
  // Past 2^126 an overflowing float sum could hide beyond hi: re-check everything up there.
  if (hi >= 0x1p126) {
    t.hi = std::numeric_limits<float>::infinity();
  } else {
    t.hi = static_cast<float>(hi);
    if (static_cast<double>(t.hi) < hi) t.hi = std::nextafter(t.hi, INFINITY);
  }
  return t;
}

bool exact_within(dataset_view a, std::size_t i, dataset_view b, std::size_t j, double eps2) {
  // reported_square: the plain sum, which stays plain (unfused) whatever the file is built for.
  return reported_square(a.d, [&](std::size_t k) { return a.at(i, k) - b.at(j, k); }) <= eps2;
}

}  // namespace epsjoin::detail::cpu
