#pragma once
// The compile-time shape both of cuda-tensor's one-kernel designs instantiate their kernel for:
// the pass, meta-16q's k steps held in registers and lbjoin's staged prefix, each chosen as the
// two engines' own launches choose it.

#include "cuda_tensor/lbjoin_pieces.cuh"
#include "gpu/agents/kernel_contract.cuh"
#include "tensor/fp16/half_convert.cuh"

namespace epsjoin::detail::hetero {

/// Calls `launch.template operator()<Pass, KSteps, Prefix>()` for pass `p`, dimension `d` and
/// lbjoin's `stage_dims`: KSteps 1, 2 or 4 while the query fragments stay in registers (up to
/// 64 dimensions), else 0; Prefix 16 when asked for and d >= 16, else 8.
template <class Launch>
void with_warp_shapes(row_join::pass p, int d, unsigned stage_dims, Launch&& launch) {
  const auto prefix = [&]<row_join::pass Pass, int KSteps>() {
    if (stage_dims == 16 && d >= 16) {
      launch.template operator()<Pass, KSteps, 16>();
    } else {
      launch.template operator()<Pass, KSteps, lbjoin::staged_prefix>();
    }
  };
  const auto k_steps = [&]<row_join::pass Pass>() {
    const unsigned steps = fp16::padded_dims(d) / 16;
    if (steps <= 1) {
      prefix.template operator()<Pass, 1>();
    } else if (steps <= 2) {
      prefix.template operator()<Pass, 2>();
    } else if (steps <= 4) {
      prefix.template operator()<Pass, 4>();
    } else {
      prefix.template operator()<Pass, 0>();
    }
  };
  if (p == row_join::pass::count) {
    k_steps.template operator()<row_join::pass::count>();
  } else {
    k_steps.template operator()<row_join::pass::fill>();
  }
}

}  // namespace epsjoin::detail::hetero
