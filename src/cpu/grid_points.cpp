#include "cpu/grid_points.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "base/parallel.hpp"

namespace epsjoin::detail::cpu {

namespace {

template <class T, class In>
void gather(const In* in, std::size_t d, std::span<const std::uint32_t> permutation,
            std::span<const int> dim_order, std::span<const double> center, unsigned threads,
            point_block<T>& out) {
  const std::size_t n = permutation.size();
  // Only float32 from float64 input is centred and rounded; everything else converts exactly.
  constexpr bool rounds = std::is_same_v<T, float> && std::is_same_v<In, double>;
  std::vector<std::vector<double>> worst(std::max(1u, threads), std::vector<double>(d, 0.0));
  // Rows are read in cell order, i.e. at random: prefetch a few rows ahead so the misses overlap
  // (measured: this loop was bound by them).
  constexpr std::size_t ahead = 16;
  detail::parallel_for(threads, n, 1 << 14, [&](std::size_t begin, std::size_t end, unsigned w) {
    std::vector<double>& err = worst[w];
    T* const values = out.values.get();
    for (std::size_t p = begin; p < end; ++p) {
      if (p + ahead < end) {
        __builtin_prefetch(in + static_cast<std::size_t>(permutation[p + ahead]) * d);
      }
      const In* row = in + static_cast<std::size_t>(permutation[p]) * d;
      for (std::size_t j = 0; j < d; ++j) {
        const auto col = static_cast<std::size_t>(dim_order[j]);
        T v;
        if constexpr (rounds) {
          const double y = static_cast<double>(row[col]) - center[col];
          v = static_cast<T>(y);
          // |y - exact difference| <= 2^-53 |y|; counted twice over for safety.
          err[j] = std::max(err[j], std::fabs(static_cast<double>(v) - y) + std::fabs(y) * 0x1p-52);
        } else {
          v = static_cast<T>(row[col]);
        }
        values[out.by_column ? j * out.stride + p : p * d + j] = v;
      }
    }
  });
  out.rounding.assign(d, 0.0);
  for (const auto& err : worst) {
    for (std::size_t j = 0; j < d; ++j) out.rounding[j] = std::max(out.rounding[j], err[j]);
  }
}

}  // namespace

template <class T>
point_block<T> gather_block(dataset_view input, std::span<const std::uint32_t> permutation,
                            std::span<const int> dim_order, std::span<const double> center,
                            bool by_column, unsigned threads) {
  point_block<T> out;
  out.n = permutation.size();
  out.d = input.d;
  out.by_column = by_column;
  out.stride = by_column ? out.n + column_pad : out.d;
  out.values.reset(new T[by_column ? out.stride * out.d : out.n * out.d]);
  if (by_column) {
    for (std::size_t j = 0; j < out.d; ++j) {
      std::fill_n(out.values.get() + j * out.stride + out.n, column_pad, T{0});
    }
  }
  if (input.type == scalar_type::f64) {
    gather(static_cast<const double*>(input.data), input.d, permutation, dim_order, center,
           threads, out);
  } else {
    gather(static_cast<const float*>(input.data), input.d, permutation, dim_order, center,
           threads, out);
  }
  return out;
}

template point_block<double> gather_block<double>(dataset_view, std::span<const std::uint32_t>,
                                                  std::span<const int>, std::span<const double>,
                                                  bool, unsigned);
template point_block<float> gather_block<float>(dataset_view, std::span<const std::uint32_t>,
                                                std::span<const int>, std::span<const double>,
                                                bool, unsigned);

}  // namespace epsjoin::detail::cpu
