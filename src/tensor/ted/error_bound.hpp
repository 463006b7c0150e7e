#pragma once
// How far ted-join's expanded-formula distance can be from the direct formula's, so the pairs
// near eps can be re-checked with the direct formula and the output equals the oracle's.
//
// ted-join computes s' = |q|^2 + |c|^2 - 2 q.c in FP64: the squared norms by a chain of d
// multiply-adds, the dot product by the FP64 MMA (4 products per step), the last two operations
// as one add and one fused multiply-add. Every elementary operation is correctly rounded (the
// FP64 MMA is IEEE: products exact, sums rounded, in some order), so with u = 2^-53 and
// gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability of Numerical Algorithms, 3.1):
//   |fl(|x|^2) - |x|^2|     <= gamma_d |x|^2                 (x = q and x = c)
//   |fl(q.c) - q.c|         <= gamma_d sum |q_k c_k| <= gamma_d (|q|^2 + |c|^2) / 2
//   the final add and fma  <= 2 u (|q|^2 + |c|^2 + 2 |q.c|) <= 4 u (|q|^2 + |c|^2)
// so |s' - s| <= (2 gamma_d + 4 u) (|q|^2 + |c|^2) <= 2 gamma_(d+2) (|q|^2 + |c|^2), where s is
// the exact squared distance of the coordinates as stored. The oracle evaluates the direct
// formula sum (q_k - c_k)^2 in the join's precision T (unit roundoff u_T): each difference,
// square and sum is rounded, |o - s| <= gamma_(d+2)(u_T) s, which for s near eps^2 is within
// gamma_(d+3)(u_T) eps^2. A pair is therefore decided by s' alone when
//   s' <= eps^2 - band (in) or s' > eps^2 + band (out), band = a (|q|^2 + |c|^2) + b,
// with a = 2 * 2 gamma_(d+2) and b = 2 gamma_(d+3)(u_T) eps^2 (each doubled against any slip
// in the argument); the pairs in between are re-checked with the direct formula in T. The same
// band, with the norms of the first k dimensions, bounds a partial sum over them, which is what
// lets the kernel drop a tile after a prefix of the dimensions (the exact partial sum is at most
// the full one).
// The band grows with |x|^2, not with the distance: data far from the origin (all coordinates
// near 1000) widens it and more pairs are re-checked, but none is decided wrongly.

#include <limits>

namespace epsjoin::detail::ted {

/// gamma_n for unit roundoff u.
constexpr double rounding_gamma(int n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu / (1.0 - nu);
}

struct decision_band {
  double per_norm = 0;  ///< a: multiplies |q|^2 + |c|^2
  double fixed = 0;     ///< b
  double at(double q_norm2, double c_norm2) const { return per_norm * (q_norm2 + c_norm2) + fixed; }
};

/// The band for d dimensions, radius eps, and a direct formula with unit roundoff `direct_u`
/// (2^-53 for FP64 joins, 2^-24 for FP32).
constexpr decision_band expanded_formula_band(int d, double eps, double direct_u) {
  constexpr double u64 = std::numeric_limits<double>::epsilon() / 2;
  decision_band band;
  band.per_norm = 4.0 * rounding_gamma(d + 2, u64);
  band.fixed = 2.0 * rounding_gamma(d + 3, direct_u) * eps * eps;
  return band;
}

}  // namespace epsjoin::detail::ted
