#include "cpu/super_ego/ego_prepare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/expects.hpp"
#include "core/parallel.hpp"
#include "cpu/super_ego/ego_simd.hpp"

namespace epsjoin::detail::ego {

namespace {

template <class T, class In>
void convert_rows(const In* in, std::size_t n, std::size_t d, const std::vector<std::size_t>& order,
                  T* out, unsigned threads) {
  parallel_for(threads, n, 1 << 13, [&](std::size_t i0, std::size_t i1, unsigned) {
    for (std::size_t i = i0; i < i1; ++i) {
      const In* src = in + i * d;
      T* dst = out + i * d;
      for (std::size_t k = 0; k < d; ++k) dst[k] = static_cast<T>(src[order[k]]);
      if constexpr (sizeof(T) < sizeof(In)) {
        // A float64 beyond the float32 range would become inf, and inf - inf a NaN that loses
        // pairs silently.
        for (std::size_t k = 0; k < d; ++k) {
          EPSJOIN_EXPECTS(std::isfinite(dst[k]), "super-ego: point ", i, ", dimension ", order[k],
                          " is ", src[order[k]], ", beyond the float32 range; use float64 "
                          "precision");
        }
      }
    }
  });
}

template <class T>
sorted_points<T> convert(dataset_view v, const std::vector<std::size_t>& order, unsigned threads) {
  sorted_points<T> p;
  p.n = v.n;
  p.d = order.size();
  p.values.resize(p.n * p.d);
  if (v.type == scalar_type::f64) {
    convert_rows(static_cast<const double*>(v.data), v.n, p.d, order, p.values.data(), threads);
  } else {
    convert_rows(static_cast<const float*>(v.data), v.n, p.d, order, p.values.data(), threads);
  }
  return p;
}

// Per-dimension minimum and maximum of the converted values, folded into lo and hi.
template <class T>
void fold_bounds(const sorted_points<T>& p, std::vector<double>& lo, std::vector<double>& hi,
                 unsigned threads) {
  const std::size_t d = p.d;
  const std::size_t grain = 1 << 14;
  const std::size_t blocks = (p.n + grain - 1) / grain;
  std::vector<double> block_lo(blocks * d), block_hi(blocks * d);
  parallel_for(threads, p.n, grain, [&](std::size_t i0, std::size_t i1, unsigned) {
    // Local minima and maxima, stored once: blocks' slots share cache lines.
    std::vector<double> bl(p.row(i0), p.row(i0) + d), bh = bl;
    for (std::size_t i = i0; i < i1; ++i) {
      const T* r = p.row(i);
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
  p.a = convert<T>(queries, order, threads);
  if (!self_join) p.b = convert<T>(data, order, threads);
  const std::size_t d = order.size();
  std::vector<double> lo(d, std::numeric_limits<double>::infinity());
  std::vector<double> hi(d, -std::numeric_limits<double>::infinity());
  fold_bounds(p.a, lo, hi, threads);
  if (!self_join) fold_bounds(p.b, lo, hi, threads);
  for (std::size_t k = 0; k < d; ++k) {
    if (lo[k] > hi[k]) lo[k] = hi[k] = 0.0;  // both sets empty
  }
  p.geometry = make_grid(eps, lo, hi);
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
