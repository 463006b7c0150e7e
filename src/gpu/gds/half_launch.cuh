#pragma once
// Host-side launch of gds-join's FP16 kernel (half_kernel.cuh), the launcher gds-join hands the
// FP16 direct formula's pipeline (tensor/fp16/direct_join.cuh) for arithmetic=fp16|fp16-fp32;
// both precisions are instantiated in half_launch.cu.

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"
#include "tensor/fp16/direct_launch.cuh"

namespace epsjoin::detail::gds {

/// One pass over `items`, one query each on kernel.lanes lanes (config: the pattern and the
/// queue); a fp16::direct_launch.
template <class T>
void launch_half_query(const row_join::join_view<T>& v, const fp16::direct_view& m,
                       const row_join::work_item* items, std::uint32_t n_items,
                       const row_join::row_output& out, row_join::pass p,
                       const row_join::launch_config& config, const fp16::direct_kernel& kernel,
                       cudaStream_t stream);

}  // namespace epsjoin::detail::gds
