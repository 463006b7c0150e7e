#include "cpu/super_ego/ego_prepare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "cpu/super_ego/ego_simd.hpp"

namespace epsjoin::detail::ego {

namespace {

// With `center` (float32 from float64 input), center[original dimension] is subtracted in float64
// before the conversion, and the largest |converted - exact| of each reordered dimension is
// folded into `rounding`.
template <class T, class In>
void convert_rows(const In* in, std::size_t n, std::size_t d, const std::vector<std::size_t>& order,
                  const double* center, T* out, std::vector<double>& rounding, unsigned threads) {
  std::vector<std::vector<double>> worst(std::max(1u, threads), std::vector<double>(d, 0.0));
  parallel_for(threads, n, 1 << 13, [&](std::size_t i0, std::size_t i1, unsigned w) {
    std::vector<double>& err = worst[w];
    for (std::size_t i = i0; i < i1; ++i) {
      const In* src = in + i * d;
      T* dst = out + i * d;
      if (center == nullptr) {
        for (std::size_t k = 0; k < d; ++k) dst[k] = static_cast<T>(src[order[k]]);
        continue;
      }
      for (std::size_t k = 0; k < d; ++k) {
        const double y = static_cast<double>(src[order[k]]) - center[order[k]];
        dst[k] = static_cast<T>(y);
        // |y - exact difference| <= 2^-53 |y|; counted twice over for safety.
        err[k] = std::max(err[k],
                          std::fabs(static_cast<double>(dst[k]) - y) + std::fabs(y) * 0x1p-52);
      }
      // A float64 beyond the float32 range would become inf, and inf - inf a NaN that loses
      // pairs silently.
      for (std::size_t k = 0; k < d; ++k) {
        EPSJOIN_EXPECTS(std::isfinite(dst[k]), "super-ego: point ", i, ", dimension ", order[k],
                        " is ", src[order[k]], ", beyond the float32 range; use float64 "
                        "precision");
      }
    }
  });
  for (const auto& err : worst) {
    for (std::size_t k = 0; k < d; ++k) rounding[k] = std::max(rounding[k], err[k]);
  }
}

template <class T>
sorted_points<T> convert(dataset_view v, const std::vector<std::size_t>& order,
                         const std::vector<double>& center, std::vector<double>& rounding,
                         unsigned threads) {
  sorted_points<T> p;
  p.n = v.n;
  p.d = order.size();
  p.values.resize(p.n * p.d);
  const double* c = center.empty() ? nullptr : center.data();
  if (v.type == scalar_type::f64) {
    convert_rows(static_cast<const double*>(v.data), v.n, p.d, order, c, p.values.data(), rounding,
                 threads);
  } else {
    convert_rows(static_cast<const float*>(v.data), v.n, p.d, order, c, p.values.data(), rounding,
                 threads);
  }
  return p;
}

// Per-dimension minimum and maximum of n rows of d values, folded into lo and hi.
template <class V>
void fold_bounds(const V* values, std::size_t n, std::size_t d, std::vector<double>& lo,
                 std::vector<double>& hi, unsigned threads) {
  const std::size_t grain = 1 << 14;
  const std::size_t blocks = (n + grain - 1) / grain;
  std::vector<double> block_lo(blocks * d), block_hi(blocks * d);
  parallel_for(threads, n, grain, [&](std::size_t i0, std::size_t i1, unsigned) {
    // Local minima and maxima, stored once: blocks' slots share cache lines.
    std::vector<double> bl(values + i0 * d, values + (i0 + 1) * d), bh = bl;
    for (std::size_t i = i0; i < i1; ++i) {
      const V* r = values + i * d;
      for (std::size_t k = 0; k < d; ++k) {
        bl[k] = std::min(bl[k], static_cast<double>(r[k]));
        bh[k] = std::max(bh[k], static_cast<double>(r[k]));
      }
    }
    std::copy(bl.begin(), bl.end(), block_lo.begin() + static_cast<std::ptrdiff_t>(i0 / grain * d));
    std::copy(bh.begin(), bh.end(), block_hi.begin() + static_cast<std::ptrdiff_t>(i0 / grain * d));
  });
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t k = 0; k < d; ++k) {
      lo[k] = std::min(lo[k], block_lo[b * d + k]);
      hi[k] = std::max(hi[k], block_hi[b * d + k]);
    }
  }
}

void fold_input_bounds(dataset_view v, std::vector<double>& lo, std::vector<double>& hi,
                       unsigned threads) {
  if (v.type == scalar_type::f64) {
    fold_bounds(static_cast<const double*>(v.data), v.n, v.d, lo, hi, threads);
  } else {
    fold_bounds(static_cast<const float*>(v.data), v.n, v.d, lo, hi, threads);
  }
}

// float32 from float64 input: the middle of both sets' range per original dimension; else none.
template <class T>
std::vector<double> centers(dataset_view queries, dataset_view data, bool self_join,
                            unsigned threads) {
  const bool rounds = std::is_same_v<T, float> &&
                      (queries.type == scalar_type::f64 || data.type == scalar_type::f64);
  if (!rounds) return {};
  const std::size_t d = queries.d;
  std::vector<double> lo(d, std::numeric_limits<double>::infinity());
  std::vector<double> hi(d, -std::numeric_limits<double>::infinity());
  fold_input_bounds(queries, lo, hi, threads);
  if (!self_join) fold_input_bounds(data, lo, hi, threads);
  std::vector<double> center(d, 0.0);
  for (std::size_t k = 0; k < d; ++k) {
    if (lo[k] <= hi[k]) center[k] = lo[k] / 2 + hi[k] / 2;  // halves first: no overflow
  }
  return center;
}

template <class T>
void sort_set(sorted_points<T>& p, const grid& g, sort_method method, unsigned threads) {
  const std::vector<std::uint32_t> order = ego_order(p.values.data(), p.n, g, method, threads);
  const std::size_t d = p.d;
  big_vector<T> sorted(p.values.size());
  p.ids.resize(p.n);
  // Rows and columns in one pass over the gathered points.
  p.column_stride = p.n + simd_pad;
  p.columns.resize(d * p.column_stride);
  for (std::size_t k = 0; k < d; ++k) {
    std::fill_n(p.columns.begin() + static_cast<std::ptrdiff_t>(k * p.column_stride + p.n),
                simd_pad, T(0));
  }
  parallel_for(threads, p.n, 1 << 13, [&](std::size_t r0, std::size_t r1, unsigned) {
    for (std::size_t r = r0; r < r1; ++r) {
      const T* src = p.values.data() + std::size_t{order[r]} * d;
      T* dst = sorted.data() + r * d;
      for (std::size_t k = 0; k < d; ++k) {  // d is small: no memmove call
        dst[k] = src[k];
        p.columns[k * p.column_stride + r] = src[k];
      }
      p.ids[r] = order[r];
    }
  });
  p.values.swap(sorted);
}

}  // namespace

template <class T>
prepared<T> prepare_points(dataset_view queries, dataset_view data, bool self_join,
                           const std::vector<std::size_t>& order, double eps, unsigned threads) {
  prepared<T> p;
  const std::size_t d = order.size();
  const std::vector<double> center = centers<T>(queries, data, self_join, threads);
  p.rounding.assign(d, 0.0);
  p.a = convert<T>(queries, order, center, p.rounding, threads);
  if (!self_join) p.b = convert<T>(data, order, center, p.rounding, threads);
  p.lower.assign(d, std::numeric_limits<double>::infinity());
  p.upper.assign(d, -std::numeric_limits<double>::infinity());
  fold_bounds(p.a.values.data(), p.a.n, d, p.lower, p.upper, threads);
  if (!self_join) fold_bounds(p.b.values.data(), p.b.n, d, p.lower, p.upper, threads);
  for (std::size_t k = 0; k < d; ++k) {
    if (p.lower[k] > p.upper[k]) p.lower[k] = p.upper[k] = 0.0;  // both sets empty
  }
  p.geometry = make_grid(eps, p.lower, p.upper);
  return p;
}

template <class T>
void index_points(prepared<T>& p, sort_method method, unsigned threads) {
  sort_set(p.a, p.geometry, method, threads);
  if (p.b.n > 0) sort_set(p.b, p.geometry, method, threads);
}

template prepared<float> prepare_points<float>(dataset_view, dataset_view, bool,
                                               const std::vector<std::size_t>&, double, unsigned);
template prepared<double> prepare_points<double>(dataset_view, dataset_view, bool,
                                                 const std::vector<std::size_t>&, double,
                                                 unsigned);
template void index_points<float>(prepared<float>&, sort_method, unsigned);
template void index_points<double>(prepared<double>&, sort_method, unsigned);

}  // namespace epsjoin::detail::ego
