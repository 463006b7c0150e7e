#pragma once
// cuda-tensor's third design (dissertation 7.2.2's last option; design=warps): one kernel whose
// blocks hold warps of both kinds. Each block takes a task of warp_tasks.hpp: its first
// tensor_warps warps decide tensor items with meta-16q's tiles code, the others CUDA-core items
// with lbjoin's tiled code. Where a task's items are all of one query cell, the block walks the
// cell's candidates once, 32 at a time: all its threads stage each tile in shared memory (the
// FP16 words the tensor warps' B fragments read, and the staged prefix the CUDA-core warps
// compare), then every warp decides its own queries against it. The other tasks run each warp
// on its own candidates, as the two kernels do. Each busy warp stamps its start and end, by kind.
//
// From fused_min_dims to warps_max_dims dimensions (the FP16 tile of 32 candidates stays under
// 17 KB of shared memory), the full pattern only, no work queue.

#include <cstdint>

#include "cuda_tensor/fused_blocks.cuh"
#include "gpu/row_join/row_join.cuh"
#include "tensor/meta16q/meta16q_gemm_kernel.cuh"

namespace epsjoin::detail::hetero {

inline constexpr unsigned warps_max_dims = 256;

/// One launch of `n_tasks` tasks on `stream`: `slots` holds warps_per_block items a task (count
/// 0: an idle warp), `shared_cell` each task's cell or no_shared_cell (both on the device).
/// `stage_dims`: the CUDA-core warps' staged prefix, as lbjoin's (8, or 16 from d >= 16).
template <class T>
void launch_shared_tiles(const row_join::join_view<T>& v, const meta16q::meta_view& m,
                         const row_join::work_item* slots, const std::uint32_t* shared_cell,
                         std::uint32_t n_tasks, unsigned tensor_warps,
                         const row_join::row_output& out, row_join::pass p, unsigned stage_dims,
                         side_clocks* clocks, cudaStream_t stream);

}  // namespace epsjoin::detail::hetero
