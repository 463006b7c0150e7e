#pragma once
// "Within eps", stated once for the engines (the oracle keeps its own on purpose): the squared
// distance is the sum over dimensions, in dimension order, of (a_k - b_k)^2, and a pair is within
// eps when it is <= eps^2: a pair at exactly eps is in.
//
// Two roundings of the running sum exist, and each engine keeps the one it was measured with:
//   plain: sum + diff * diff, the CPU engines';
//   fused: fma(diff, diff, sum), what nvcc emits for the GPU's `sum += diff * diff`. hegjoin's
//     CPU side must round so, or a pair at eps decided by the CPU in one run and by the GPU in
//     the next could come and go.
// Terms are >= 0 and IEEE addition is monotone, so a partial sum past the limit stays past it:
// stopping early is exact. Where a caller may stop is part of its speed, so it says (Every).
// GPU kernels that keep their own order, chosen for ILP, and so their own roundings:
// base/emit.cuh `within` (four squares summed, then added), gpu/agents/ilp_within.cuh `within_ilp`
// (8 partial sums) and gpu/lbjoin/kernels.cuh `within_after_prefix` (exits every 8, then 4).

#include <cmath>
#include <cstddef>
#include <utility>

#include "base/host_device.hpp"
#include "epsjoin/options.hpp"

namespace epsjoin::detail {

enum class rounding { plain, fused };

/// sum plus (a - b)^2, rounded as R says.
template <rounding R, class T>
EPSJOIN_HD inline T add_square(T sum, T a, T b) {
  const T diff = a - b;
  if constexpr (R == rounding::fused) {
#if defined(__CUDA_ARCH__)
    return ::fma(diff, diff, sum);
#else
    return std::fma(diff, diff, sum);
#endif
  } else {
    return sum + diff * diff;
  }
}

/// The norms a kernel computes itself (the others reach engines as Euclidean joins).
template <distance_metric M>
inline constexpr bool is_kernel_norm = M == distance_metric::euclidean ||
                                       M == distance_metric::manhattan ||
                                       M == distance_metric::chebyshev;

/// The running value of metric M after one more dimension: the sum of squares (plain rounding),
/// the sum of |a - b|, or their maximum. Compared with norm_limit<M>(eps): each only grows, so an
/// early exit past the limit stays exact.
template <distance_metric M, class T>
EPSJOIN_HD inline T accumulate(T acc, T a, T b) {
  static_assert(is_kernel_norm<M>);
  if constexpr (M == distance_metric::euclidean) {
    return add_square<rounding::plain>(acc, a, b);
  } else {
    const T diff = a > b ? a - b : b - a;
    if constexpr (M == distance_metric::manhattan) {
      return acc + diff;
    } else {
      return acc > diff ? acc : diff;
    }
  }
}

/// What accumulate<M>'s result is compared with: eps^2 for euclidean, eps otherwise.
template <distance_metric M>
constexpr double norm_limit(double eps) {
  return M == distance_metric::euclidean ? eps * eps : eps;
}

/// The squared distance of rows a and b over D dimensions (D == 0: over d). With Every > 0 the
/// sum is abandoned once past `stop` after each whole block of Every dimensions, and that
/// partial sum (> stop) is returned; with Every == 0 all dimensions are summed.
template <rounding R, int D, int Every, class T, class Dim>
EPSJOIN_HD inline T squared_distance(const T* __restrict__ a, const T* __restrict__ b, Dim d,
                                     T stop) {
  const Dim dims = D > 0 ? static_cast<Dim>(D) : d;
  T sum = 0;
  Dim k = 0;
  if constexpr (Every > 0) {
    for (; k + Every <= dims; k += Every) {
      for (int t = 0; t < Every; ++t) sum = add_square<R>(sum, a[k + t], b[k + t]);
      if (sum > stop) return sum;
    }
  }
  for (; k < dims; ++k) sum = add_square<R>(sum, a[k], b[k]);
  return sum;
}

/// True when rows a and b are within eps (eps2 = eps^2); Every and D as in squared_distance.
template <rounding R, int D, int Every, class T, class Dim>
EPSJOIN_HD inline bool within_eps(const T* __restrict__ a, const T* __restrict__ b, Dim d,
                                  T eps2) {
  return squared_distance<R, D, Every>(a, b, d, eps2) <= eps2;
}

/// x exactly as computed, rounded to float64: an empty asm the compiler cannot see through keeps
/// it from fusing the product that made x into the sum that takes it. GCC fuses by default in
/// C++ wherever FMA is enabled (the x86-64-v3 kernels), which would change the last bit.
inline double unfused(double x) {
#if defined(__GNUC__) && defined(__x86_64__)
  asm("" : "+x"(x));
#elif defined(__GNUC__) && defined(__aarch64__)
  asm("" : "+w"(x));
#else
  volatile double kept = x;
  x = kept;
#endif
  return x;
}

/// The squared Euclidean distance as the oracle decides and a result reports it, the way scipy's
/// and scikit-learn's trees compute it, so they agree to the last bit: in float64, the squares of
/// diff(k), for k = 0 .. d - 1 in the input's dimension order, each rounded, summed in that
/// order. diff(k) is the difference in dimension k, in float64.
template <class Diff>
inline double reported_square(std::size_t d, Diff&& diff) {
  double sum = 0;
  for (std::size_t k = 0; k < d; ++k) {
    const double delta = diff(k);
    sum += unfused(delta * delta);
  }
  return sum;
}

/// The root of reported_square: the distance itself.
template <class Diff>
inline double reported_distance(std::size_t d, Diff&& diff) {
  return std::sqrt(reported_square(d, std::forward<Diff>(diff)));
}

}  // namespace epsjoin::detail
