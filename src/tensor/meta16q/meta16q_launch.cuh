#pragma once
// Host-side launch of meta-16q's kernels; each precision's instantiations live in their own
// translation unit (meta16q_f32.cu, meta16q_f64.cu).

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"
#include "tensor/meta16q/meta16q_gemm_kernel.cuh"
#include "tensor/meta16q/meta16q_tiles_kernel.cuh"

namespace epsjoin::detail::meta16q {

/// The all-pairs kernel (meta16q_gemm_kernel.cuh) over `items`, against candidates [0, n_data),
/// with warp tiles of 8 `row_blocks` (4 or 8) query rows.
template <class T>
void launch_meta(const join_view<T>& v, const meta_view& m, std::uint32_t n_data,
                 const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                 pass p, bool halving, int row_blocks, cudaStream_t stream);

/// The indexed kernel (meta16q_tiles_kernel.cuh) over `items` (config: the pattern and the queue).
template <class T>
void launch_meta_tiles(const join_view<T>& v, const meta_view& m, const row_join::work_item* items,
                       std::uint32_t n_items, const row_output& out, pass p,
                       const row_join::launch_config& config, cudaStream_t stream);

}  // namespace epsjoin::detail::meta16q
