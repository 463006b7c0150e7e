#pragma once
// Device-side building blocks shared by the CUDA-core join kernels: the early-exit distance
// test and warp-aggregated result output.

#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

#include "epsjoin/result.hpp"

namespace epsjoin::detail {

/// What a join kernel produces.
enum class emit_mode : int {
  pairs,            ///< ordered pairs into a bounded buffer, counting past its end
  count_total,      ///< only the number of pairs the pairs mode would write
  count_per_query,  ///< neighbours per input id, nothing else
};

/// Calls launch(std::integral_constant<emit_mode, M>{}) with M the run-time `mode`, so a kernel
/// template over the mode is written out once per launch site.
template <class Launch>
void with_emit_mode(emit_mode mode, Launch&& launch) {
  switch (mode) {
    case emit_mode::pairs:
      launch(std::integral_constant<emit_mode, emit_mode::pairs>{});
      break;
    case emit_mode::count_total:
      launch(std::integral_constant<emit_mode, emit_mode::count_total>{});
      break;
    case emit_mode::count_per_query:
      launch(std::integral_constant<emit_mode, emit_mode::count_per_query>{});
      break;
  }
}

/// Where a kernel's results go. In pairs mode `counter` keeps counting past `capacity`, so the
/// host learns both that a batch overflowed and by how much; nothing past capacity is written.
struct result_target {
  index_pair* pairs = nullptr;
  unsigned long long* counter = nullptr;
  unsigned long long capacity = 0;
  std::uint32_t* counts = nullptr;  // count_per_query: [n] by input id
};

/// Squared distance <= eps2, leaving the loop once the partial sum passes eps2 (checked every
/// four dimensions, so low-dimensional loops are not slowed by the test).
template <class T>
__device__ __forceinline__ bool within(const T* __restrict__ a, const T* __restrict__ b, int d,
                                       T eps2) {
  T sum = 0;
  int k = 0;
  for (; k + 4 <= d; k += 4) {
    const T d0 = a[k] - b[k], d1 = a[k + 1] - b[k + 1];
    const T d2 = a[k + 2] - b[k + 2], d3 = a[k + 3] - b[k + 3];
    sum += d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3;
    if (sum > eps2) return false;
  }
  for (; k < d; ++k) {
    const T diff = a[k] - b[k];
    sum += diff * diff;
  }
  return sum <= eps2;
}

/// Records the pair (query, neighbor), and (neighbor, query) too when `both`. Threads of a warp
/// that emit together share one atomic on the counter.
template <emit_mode Mode>
__device__ __forceinline__ void emit(const result_target& out, std::uint32_t query,
                                     std::uint32_t neighbor, bool both) {
  namespace cg = cooperative_groups;
  if constexpr (Mode == emit_mode::count_per_query) {
    atomicAdd(out.counts + query, 1u);
    if (both) atomicAdd(out.counts + neighbor, 1u);
  } else {
    const cg::coalesced_group group = cg::coalesced_threads();
    const unsigned long long mine = both ? 2 : 1;
    // Lanes may differ in `both` only across kernels, never within one: the total is size*mine.
    unsigned long long base = 0;
    if (group.thread_rank() == 0) base = atomicAdd(out.counter, group.size() * mine);
    base = group.shfl(base, 0) + group.thread_rank() * mine;
    if constexpr (Mode == emit_mode::pairs) {
      if (base + mine <= out.capacity) {
        out.pairs[base] = {query, neighbor};
        if (both) out.pairs[base + 1] = {neighbor, query};
      }
    }
  }
}

}  // namespace epsjoin::detail
