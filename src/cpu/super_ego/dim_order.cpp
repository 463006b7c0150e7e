#include "cpu/super_ego/dim_order.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "base/parallel.hpp"

namespace epsjoin::detail::ego {

namespace {

constexpr std::size_t sample_limit = 8192;

// Rows of `v` taken with a fixed stride, at most sample_limit of them.
std::vector<std::size_t> sample_rows(dataset_view v) {
  const std::size_t m = std::min(v.n, sample_limit);
  std::vector<std::size_t> rows(m);
  for (std::size_t s = 0; s < m; ++s) rows[s] = s * v.n / m;
  return rows;
}

// Bin of x in eps-wide bins from lo, clamped so that absurd ratios stay in range.
std::int64_t bin(double x, double lo, double inv_eps) {
  const double b = std::floor((x - lo) * inv_eps);
  return static_cast<std::int64_t>(std::min(b, 0x1p62));
}

}  // namespace

std::vector<double> dimension_selectivity(dataset_view a, dataset_view b, double eps,
                                          unsigned threads) {
  const std::size_t d = a.n > 0 ? a.d : b.d;
  std::vector<double> result(d, 1.0);
  if (a.n == 0 || b.n == 0) return result;
  const std::vector<std::size_t> rows_a = sample_rows(a);
  const std::vector<std::size_t> rows_b = sample_rows(b);
  const double inv_eps = 1.0 / eps;
  parallel_for(threads, d, 1, [&](std::size_t k0, std::size_t k1, unsigned) {
    std::vector<std::int64_t> bins_a(rows_a.size()), bins_b(rows_b.size());
    for (std::size_t k = k0; k < k1; ++k) {
      double lo = a.at(rows_a[0], k);
      for (std::size_t r : rows_a) lo = std::min(lo, a.at(r, k));
      for (std::size_t r : rows_b) lo = std::min(lo, b.at(r, k));
      for (std::size_t s = 0; s < rows_a.size(); ++s) bins_a[s] = bin(a.at(rows_a[s], k), lo, inv_eps);
      for (std::size_t s = 0; s < rows_b.size(); ++s) bins_b[s] = bin(b.at(rows_b[s], k), lo, inv_eps);
      std::sort(bins_a.begin(), bins_a.end());
      std::sort(bins_b.begin(), bins_b.end());
      auto count_b = [&](std::int64_t c) {
        const auto range = std::equal_range(bins_b.begin(), bins_b.end(), c);
        return static_cast<double>(range.second - range.first);
      };
      double pairs = 0;
      for (std::size_t s = 0; s < bins_a.size();) {
        const std::int64_t c = bins_a[s];
        std::size_t e = s;
        while (e < bins_a.size() && bins_a[e] == c) ++e;
        // Same bin: within eps for sure; a neighbouring bin: for half the pairs on average.
        pairs += static_cast<double>(e - s) *
                 (count_b(c) + 0.5 * (count_b(c - 1) + count_b(c + 1)));
        s = e;
      }
      result[k] = pairs / (static_cast<double>(bins_a.size()) * static_cast<double>(bins_b.size()));
    }
  });
  return result;
}

std::vector<double> dimension_variance(dataset_view a, dataset_view b, unsigned threads) {
  const std::size_t d = a.n > 0 ? a.d : b.d;
  std::vector<double> result(d, 0.0);
  const std::vector<std::size_t> rows_a = sample_rows(a);
  const std::vector<std::size_t> rows_b = sample_rows(b);
  const double m = static_cast<double>(rows_a.size() + rows_b.size());
  if (m == 0) return result;
  parallel_for(threads, d, 1, [&](std::size_t k0, std::size_t k1, unsigned) {
    for (std::size_t k = k0; k < k1; ++k) {
      double sum = 0;
      for (std::size_t r : rows_a) sum += a.at(r, k);
      for (std::size_t r : rows_b) sum += b.at(r, k);
      const double mean = sum / m;
      double sq = 0;
      for (std::size_t r : rows_a) sq += (a.at(r, k) - mean) * (a.at(r, k) - mean);
      for (std::size_t r : rows_b) sq += (b.at(r, k) - mean) * (b.at(r, k) - mean);
      result[k] = sq / m;
    }
  });
  return result;
}

std::vector<std::size_t> dimension_order(dataset_view a, dataset_view b, double eps,
                                         reorder_rule rule, unsigned threads) {
  const std::size_t d = a.n > 0 ? a.d : b.d;
  std::vector<std::size_t> order(d);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (rule == reorder_rule::off || d < 2) return order;
  if (rule == reorder_rule::selectivity) {
    const std::vector<double> s = dimension_selectivity(a, b, eps, threads);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return s[x] < s[y]; });
  } else {
    const std::vector<double> v = dimension_variance(a, b, threads);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return v[x] > v[y]; });
  }
  return order;
}

}  // namespace epsjoin::detail::ego
