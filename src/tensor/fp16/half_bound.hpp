#pragma once
// meta-16q's numerics: how the data is brought into FP16's range, and how far the FP16-FP32
// expanded-formula distance can be from the exact one, so the exact mode decides most pairs from
// it and re-checks only those near eps with the direct formula in the join's precision.
//
// Scaling. The kernel joins x = (p - center) 2^e, not p: FP16 keeps 11 significant bits, so its
// error is relative to |x|, and translating the data to its mean makes |x| as small as it gets
// for the data as a whole (coordinates near 1000 would otherwise lose everything below 0.5). The
// power of two puts the largest |x_k| in [2^13, 2^14): far from FP16's overflow (65504), with
// squares and sums of squares far inside FP32's range, and it scales distances and eps exactly.
//
// The bound, per pair, with q and c translated and scaled (exact values, computed in FP64) and
// q~, c~ their FP16 roundings:
//   |x~_k - x_k| <= u16 |x_k| + h, u16 = 2^-11, h = 2^-25 (half the spacing of FP16's
//   subnormals; the FP64 translation adds 2 u64 |x_k| more), so
//   delta = (u16 + 2 u64)(|q| + |c|) + 2 h sqrt(d) >= |q~ - q| + |c~ - c|
//         >= | |q~ - c~| - |q - c| |.
// The kernel computes s' = |q~|^2 + fl(|c~|^2 - 2 fl(q~.c~)) (it compares the second term with
// thresholds less |q~|^2, rounded outwards): the FP16 products are exact in FP32, the tensor
// cores add them in FP32 with truncation (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of
// NVIDIA tensor cores", PeerJ CS 2021), so each addition errs by at most 2^-23 relative and the
// dot product by gamma_d(2^-23) sum |q~_k c~_k| <= d 2^-23 (|q~|^2 + |c~|^2) / 2 (to first order;
// the constant below takes (d + 2) 2^-22, twice that and more). The squared norms are FP64 sums
// rounded to FP32 and the fused multiply-add rounds once, on a value of at most twice the
// norms: 4 u32 (|q~|^2 + |c~|^2) together. So |s' - |q~ - c~|^2| <= E = a (|q~|^2 + |c~|^2) with
// a = 2 (d + 3) 2^-22 (doubled once more). Finally the oracle computes the direct formula in the
// join's precision, relative error rho = 2 gamma_(d+3)(u_T) on eps^2 (error_bound.hpp). A pair is
//   surely in  when s' <= lo = (eps - delta)^2 (1 - rho) - E   (eps > delta; else nothing is)
//   surely out when s' >  hi = (eps + delta)^2 (1 + rho) + E,
// and the pairs in between are re-checked with the direct formula. delta and E grow with the
// norms, so the kernel may use the largest norms of a tile's rows and columns for all its pairs.
// The approximate mode (the papers') takes s' <= eps^2 alone; outside [lo, hi] it agrees with
// the exact decision, so only the pairs inside need both decisions to measure its accuracy.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "base/host_device.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/resources.hpp"

namespace epsjoin::detail::fp16 {

inline constexpr double half_unit_roundoff = 0x1p-11;
inline constexpr double half_subnormal_error = 0x1p-25;
/// Largest |x_k| after scaling is below this (and at least half of it).
inline constexpr double half_scaled_max = 0x1p14;

struct half_band {
  double quant_per_norm = 0;  ///< delta = quant_per_norm (|q| + |c|) + quant_fixed
  double quant_fixed = 0;
  double arith_per_norm2 = 0;  ///< E = arith_per_norm2 (|q~|^2 + |c~|^2)
  double rho = 0;              ///< the oracle's relative rounding of eps^2
};

/// The band for d dimensions and a direct formula of unit roundoff `direct_u` (2^-53 for FP64
/// joins, 2^-24 for FP32); each term doubled against any slip in the argument above.
inline half_band half_decision_band(int d, double direct_u) {
  constexpr double u64 = std::numeric_limits<double>::epsilon() / 2;
  const double dims = static_cast<double>(d);
  half_band band;
  band.quant_per_norm = 2.0 * (half_unit_roundoff + 2.0 * u64);
  band.quant_fixed = 2.0 * 2.0 * half_subnormal_error * std::sqrt(dims);
  band.arith_per_norm2 = 2.0 * (dims + 3.0) * 0x1p-22;
  const double nu = (dims + 3.0) * direct_u;
  band.rho = 2.0 * nu / (1.0 - nu);
  return band;
}

/// The least float >= x (x >= 0; +inf past the largest float): host-side constants of the
/// kernels' thresholds, rounded towards a wider band.
inline float float_up(double x) {
  if (x > std::numeric_limits<float>::max()) return std::numeric_limits<float>::infinity();
  const float f = static_cast<float>(x);
  return static_cast<double>(f) >= x ? f
                                     : std::nextafter(f, std::numeric_limits<float>::infinity());
}

/// The greatest float <= x (x >= 0; the largest float past it).
inline float float_down(double x) {
  if (x >= std::numeric_limits<float>::max()) return std::numeric_limits<float>::max();
  const float f = static_cast<float>(x);
  return static_cast<double>(f) <= x ? f : std::nextafter(f, 0.0f);
}

struct decision_thresholds {
  double lo;  ///< s' <= lo: surely within eps (negative when nothing is)
  double hi;  ///< s' > hi: surely not
};

/// The thresholds for pairs whose norms (unquantized, |q| + |c|) and squared norms (quantized,
/// |q~|^2 + |c~|^2) are at most `norm_sum` and `norm2_sum`; eps in scaled units.
EPSJOIN_HD inline decision_thresholds thresholds_for(const half_band& band, double eps,
                                                     double norm_sum, double norm2_sum) {
  const double delta = band.quant_per_norm * norm_sum + band.quant_fixed;
  const double arith = band.arith_per_norm2 * norm2_sum;
  const double below = eps - delta, above = eps + delta;
  decision_thresholds t;
  t.lo = below > 0 ? below * below * (1.0 - band.rho) - arith : -1.0;
  t.hi = above * above * (1.0 + band.rho) + arith;
  return t;
}

/// Where the data goes before it is rounded to FP16: x = (p - center) 2^exponent.
struct half_scaling {
  std::vector<double> center;  ///< [d], the mean of the points
  int exponent = 0;
  double scale() const { return std::ldexp(1.0, exponent); }
};

/// The exponent that puts `largest` (the largest |p_k - center_k|, > 0 and finite) in
/// [half_scaled_max / 2, half_scaled_max), clamped to [-1022, 1000] at the ends of FP64's range
/// (a smaller spread then sits lower in FP16, still bounded).
inline int half_exponent_for(double largest) {
  // 2 largest = m 2^(x + 1) with m in [0.5, 1): times 2^(14 - x - 1) it is m 2^14.
  int x = 0;
  std::frexp(largest, &x);
  return std::clamp(static_cast<int>(std::log2(half_scaled_max)) - x - 1, -1022, 1000);
}

/// The host reference of the scaling the engines choose on the device (device_scaling.cuh); the
/// tests compute the declared band from it. The mean of `a`'s and `b`'s points (b may be empty)
/// and the exponent half_exponent_for gives their largest |p_k - center_k| (0 when every point
/// is the same).
half_scaling choose_half_scaling(dataset_view a, dataset_view b, unsigned threads);

/// The scaling the engines choose on the device (device_scaling.cuh) for `a`'s and `b`'s points
/// (FP64, input column order), for tests to compare with choose_half_scaling. CUDA builds only.
half_scaling snapshot_device_scaling(resources& res, dataset_view a, dataset_view b);

}  // namespace epsjoin::detail::fp16
