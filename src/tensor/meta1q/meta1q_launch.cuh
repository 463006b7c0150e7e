#pragma once
// Host-side launch of the FP16 direct-formula kernels: meta-1q's (meta1q_kernel.cuh) and
// gds-join's FP16 arithmetic (gpu/gds/half_kernel.cuh); each precision's instantiations live in
// their own translation unit (meta1q_f32.cu, meta1q_f64.cu).

#include <cstdint>

#include "gpu/row_join/kernel_contract.cuh"
#include "tensor/fp16/direct_view.cuh"

namespace epsjoin::detail::meta1q {

using row_join::join_view;
using row_join::pass;
using row_join::row_output;

/// Which kernel joins with the FP16 direct formula.
struct direct_kernel {
  bool tensor_cores = true;  ///< meta-1q's; else gds-join's on CUDA cores
  bool half_sums = false;    ///< sums in FP16, else FP32
  unsigned lanes = 8;        ///< CUDA cores: lanes per query (1-32, a power of two)
};

/// One pass over `items` (meta-1q: up to 32 queries of a cell each; CUDA cores: one query each;
/// config: the pattern and the queue).
template <class T>
void launch_direct(const join_view<T>& v, const fp16::direct_view& m,
                   const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                   pass p, const row_join::launch_config& config, const direct_kernel& kernel,
                   cudaStream_t stream);

}  // namespace epsjoin::detail::meta1q
