#pragma once
// The re-check of an FP16 decision that fell inside its error band, in the join's own precision
// with the direct formula (base/emit.cuh's within), so the exact mode's result is the oracle's:
// meta-16q's, meta-1q's and gds-join's FP16 arithmetic's kernels share it.

#include <cstdint>

#include "base/emit.cuh"
#include "gpu/agents/kernel_contract.cuh"

namespace epsjoin::detail::fp16 {

using row_join::join_view;

/// The rare part of a decision, out of line: a pair inside the band, whose FP16-FP32 squared
/// distance is `s`. View: meta_view, or direct_view (meta-1q and gds-join's FP16 arithmetic).
template <class T, bool Tally, class View>
__device__ __noinline__ bool recheck_pair(const View& m, const join_view<T>& v, float s,
                                          std::uint32_t pos, std::uint32_t j) {
  const bool approximate_hit = s <= m.eps2;
  if (m.approximate && !Tally) return approximate_hit;
  const bool exact = within(v.query_points + static_cast<std::size_t>(pos) * v.d,
                            v.data_points + static_cast<std::size_t>(j) * v.d, v.d, v.eps2);
  if constexpr (Tally) {
    // In both modes: the exact mode reports how the approximate one would have fared.
    atomicAdd(m.tally, 1ull);
    if (approximate_hit != exact) atomicAdd(m.tally + (approximate_hit ? 1 : 2), 1ull);
  }
  return m.approximate ? approximate_hit : exact;
}

}  // namespace epsjoin::detail::fp16
