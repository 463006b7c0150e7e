#pragma once
// What the kernels of the FP16 direct formula (meta-1q on tensor cores, gds-join's FP16
// arithmetic on CUDA cores) read besides the join's own view: the FP16 copies (half_points.cuh)
// and direct_bound.hpp's band in FP32, with the decision every one of their pairs goes through.

#include <cuda_fp16.h>

#include <cstdint>

#include "tensor/fp16/direct_bound.hpp"
#include "tensor/fp16/half_points.cuh"
#include "tensor/fp16/half_recheck.cuh"

namespace epsjoin::detail::fp16 {

/// direct_bound.hpp's band in FP32, each constant rounded towards a wider band.
struct direct_float_band {
  float quant_per_norm = 0, quant_fixed = 0;  ///< up
  float eps_in = 0;                           ///< eps (1 - rho), down
  float eps_out = 0;                          ///< eps (1 + rho), up
  float diff_shrink = 1, diff_grow = 1;       ///< 1 - u_d down, 1 + u_d up
  float diff_abs = 0;                         ///< up
  float sum_shrink = 1, sum_grow = 1;         ///< 1 - r down, 1 + r up
  float sum_abs = 0;                          ///< up
  float overflow = 0;                         ///< FP16 sums: down; 0 for FP32 sums
};

inline direct_float_band to_float(const direct_band& b, double eps) {
  direct_float_band f;
  f.quant_per_norm = float_up(b.quant_per_norm);
  f.quant_fixed = float_up(b.quant_fixed);
  f.eps_in = float_down(eps * (1.0 - b.rho) * (1.0 - 0x1p-52));
  f.eps_out = float_up(eps * (1.0 + b.rho) * (1.0 + 0x1p-52));
  f.diff_shrink = float_down(1.0 - b.diff_rel);
  f.diff_grow = float_up(1.0 + b.diff_rel);
  f.diff_abs = float_up(b.diff_abs);
  f.sum_shrink = float_down(1.0 - b.sum_rel);
  f.sum_grow = float_up(1.0 + b.sum_rel);
  f.sum_abs = float_up(b.sum_abs);
  f.overflow = b.overflow > 0 ? float_down(b.overflow) : 0.0f;
  return f;
}

struct direct_view {
  half_arrays half;
  direct_float_band band;
  float eps2 = 0;  ///< scaled, the approximate decision's threshold
  bool approximate = false;
  /// Counting pass: decision_tally's counters (base/decision_tally.cuh).
  unsigned long long* tally = nullptr;
};

/// direct_bound.hpp's direct_thresholds_for in FP32 with directed rounding: lo down, hi up.
__device__ __forceinline__ void direct_thresholds(const direct_float_band& b, float norm_sum,
                                                  float& lo, float& hi) {
  const float delta = __fmaf_ru(b.quant_per_norm, norm_sum, b.quant_fixed);
  const float above = __fmaf_ru(__fadd_ru(b.eps_out, delta), b.diff_grow, b.diff_abs);
  hi = __fmaf_ru(__fmul_ru(above, above), b.sum_grow, b.sum_abs);
  const float below = __fmaf_rd(__fsub_rd(b.eps_in, delta), b.diff_shrink, -b.diff_abs);
  lo = below > 0.0f ? __fmaf_rd(__fmul_rd(below, below), b.sum_shrink, -b.sum_abs) : -1.0f;
}

/// The decision on pair (query position `pos`, data position `j`) whose FP16 direct-formula
/// squared distance is `s` (+inf or 65504 where FP16 sums overflowed), with the pair's
/// thresholds: surely out, surely in, or the re-check (recheck_pair).
template <class T, bool Tally>
__device__ __forceinline__ bool direct_decide_within(const direct_view& m, const join_view<T>& v,
                                                     float s, float lo, float hi, std::uint32_t pos,
                                                     std::uint32_t j) {
  if (m.band.overflow > 0.0f && s >= static_cast<float>(half_max)) {
    // The exact sum is at least band.overflow: surely out only if hi lies below that.
    if (hi < m.band.overflow) return false;
    s = hi;  // inside the band: re-checked
  }
  if (s > hi) return false;
  if (s <= lo) return true;
  return recheck_pair<T, Tally>(m, v, s, pos, j);
}

/// direct_decide_within for a pair whose unquantized norms add up to `norm_sum`.
template <class T, bool Tally>
__device__ __forceinline__ bool direct_decide(const direct_view& m, const join_view<T>& v, float s,
                                              float norm_sum, std::uint32_t pos, std::uint32_t j) {
  float lo, hi;
  direct_thresholds(m.band, norm_sum, lo, hi);
  return direct_decide_within<T, Tally>(m, v, s, lo, hi, pos, j);
}

}  // namespace epsjoin::detail::fp16
