#pragma once
// The error bound of the FP16 direct formula, s' = sum_k fl(fl(c~_k - q~_k)^2), which meta-1q
// computes on the tensor cores (the difference through an identity MMA, then the Gram matrix of
// the differences) and gds-join's FP16 arithmetic on CUDA cores; summed in FP32 or in FP16.
// The data is scaled as for meta-16q (half_bound.hpp), and the same quantization delta bounds
// | |q~ - c~| - |q - c| |. Unlike the expanded formula's, the arithmetic error here is relative
// to the distance itself, not to the norms; the quantization term still grows with the norms,
// and it is what sets the band's width on the papers' data (bench/RESULTS.md, issue 8).
//
// With e_k the computed difference and x = q~ - c~ (exact):
//   e_k = x_k (1 + theta_k) + eta_k, |theta_k| <= u_d, |eta_k| <= h_d
//   (u_d: 2^-11 rounded to nearest, 2^-10 if the hardware truncates; FP32 sums of the identity
//   MMA add 2^-23; h_d: FP16's subnormal spacing 2^-24 at most), so by the triangle inequality
//   in l2, |e| lies in [|x| (1 - u_d) - h_d sqrt(d), |x| (1 + u_d) + h_d sqrt(d)].
//   The sum of the d squares, all >= 0, errs by at most a relative gamma_(d+2)(u_s) and, in
//   FP16, an absolute (2 d + 3) 2^-24 for products and sums below FP16's normal range
//   (u_s = 2^-23 for FP32 sums that may truncate, 2^-10 for FP16 ones).
// With |q - c| = D (scaled) and the oracle's relative rounding rho on eps^2, D <= eps (1 - rho)
// makes the oracle take the pair and D > eps (1 + rho) makes it refuse it, so
//   surely in  when s' <= lo = ((eps (1 - rho) - delta)(1 - u_d) - h_d sqrt(d))^2 (1 - r) - a
//   surely out when s' >  hi = ((eps (1 + rho) + delta)(1 + u_d) + h_d sqrt(d))^2 (1 + r) + a,
// r and a the sum's relative and absolute terms. Every term below is doubled, as in
// half_bound.hpp. FP16 sums overflow at 65504: an overflowed s' is surely out only when hi lies
// below what the sum can reach before overflowing (the kernels check; else it is re-checked), and
// the scaling keeps eps^2 far below it (cap_for_half_sums).

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/host_device.hpp"
#include "tensor/fp16/half_bound.hpp"

namespace epsjoin::detail::fp16 {

/// The largest finite FP16 value: an FP16 sum at or past it has overflowed.
inline constexpr double half_max = 65504.0;

struct direct_band {
  double quant_per_norm = 0;  ///< delta = quant_per_norm (|q| + |c|) + quant_fixed
  double quant_fixed = 0;
  double diff_rel = 0;  ///< u_d
  double diff_abs = 0;  ///< h_d sqrt(d)
  double sum_rel = 0;   ///< r
  double sum_abs = 0;   ///< a
  double rho = 0;       ///< the oracle's relative rounding of eps^2
  double overflow = 0;  ///< an FP16 s' >= half_max means the exact sum is at least this
};

/// The band for d dimensions, sums in FP16 (`half_sums`) or FP32, and a direct formula of unit
/// roundoff `direct_u` in the oracle (2^-53 for FP64 joins, 2^-24 for FP32).
inline direct_band direct_decision_band(int d, bool half_sums, double direct_u) {
  const double dims = static_cast<double>(d);
  const half_band quant = half_decision_band(d, direct_u);
  direct_band band;
  band.quant_per_norm = quant.quant_per_norm;
  band.quant_fixed = quant.quant_fixed;
  band.rho = quant.rho;
  band.diff_rel = 2.0 * (half_sums ? 0x1p-10 : 0x1p-11 + 0x1p-23);
  band.diff_abs = 2.0 * 0x1p-24 * std::sqrt(dims);
  const double u_s = half_sums ? 0x1p-10 : 0x1p-23;
  const double gamma = (dims + 2.0) * u_s / (1.0 - (dims + 2.0) * u_s);
  band.sum_rel = 2.0 * gamma;
  band.sum_abs = half_sums ? 2.0 * (2.0 * dims + 3.0) * 0x1p-24 : 0.0;
  band.overflow = half_sums ? half_max * (1.0 - band.sum_rel) - band.sum_abs : 0.0;
  return band;
}

/// The thresholds for a pair whose unquantized norms add up to at most `norm_sum`; eps scaled.
EPSJOIN_HD inline decision_thresholds direct_thresholds_for(const direct_band& band, double eps,
                                                            double norm_sum) {
  const double delta = band.quant_per_norm * norm_sum + band.quant_fixed;
  const double below = (eps * (1.0 - band.rho) - delta) * (1.0 - band.diff_rel) - band.diff_abs;
  const double above = (eps * (1.0 + band.rho) + delta) * (1.0 + band.diff_rel) + band.diff_abs;
  decision_thresholds t;
  t.lo = below > 0 ? below * below * (1.0 - band.sum_rel) - band.sum_abs : -1.0;
  t.hi = above * above * (1.0 + band.sum_rel) + band.sum_abs;
  return t;
}

/// FP16 sums: the largest exponent that keeps the scaled eps at most 2^6, so eps^2 and its band
/// sit far below FP16's overflow (the data then uses less of FP16's range, when eps is large
/// against the data's spread).
inline int cap_for_half_sums(int exponent, double eps) {
  int x = 0;
  std::frexp(eps, &x);  // eps < 2^x
  return std::min(exponent, 6 - x);
}

}  // namespace epsjoin::detail::fp16
