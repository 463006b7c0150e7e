#pragma once
// Host-side launch of meta-1q's kernel (meta1q_kernel.cuh), the launcher meta-1q hands the FP16
// direct formula's pipeline (tensor/fp16/direct_join.cuh); each precision's instantiation lives
// in its own translation unit (meta1q_f32.cu, meta1q_f64.cu).

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"
#include "tensor/fp16/direct_launch.cuh"

namespace epsjoin::detail::meta1q {

using row_join::join_view;
using row_join::pass;
using row_join::row_output;

/// One pass over `items`, up to 32 queries of a cell each (config: the pattern and the queue);
/// a fp16::direct_launch.
template <class T>
void launch_meta1q(const join_view<T>& v, const fp16::direct_view& m,
                   const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                   pass p, const row_join::launch_config& config, const fp16::direct_kernel& kernel,
                   cudaStream_t stream);

}  // namespace epsjoin::detail::meta1q
