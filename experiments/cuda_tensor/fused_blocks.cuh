#pragma once
// cuda-tensor's second design (dissertation 7.2.3): one kernel whose blocks are of two kinds.
// Some blocks run meta-16q's tiles warp on the tensor cores' items, the others lbjoin's tiled
// warp on the CUDA cores' items. Interleaved (the default), the kinds alternate in proportion
// along the grid, so that both share every SM from the first wave to the last, where two kernels
// on two streams overlap only as far as the scheduler lets the second kernel's blocks in beside
// the first's; tensor-first puts every tensor block before the CUDA blocks (the scheduler then
// runs the kinds mostly one after the other: the ablation). The kernel holds the larger register
// and shared memory footprint of the two for every block. Each block stamps when it starts and ends
// (%globaltimer), so each side's span and their overlap are measured inside the one launch.
//
// From 9 dimensions on (lbjoin's tiled warp with a staged prefix; below, the tensor cores do not
// pay and the design of two streams runs instead), the full pattern only, no work queue.

#include <cstdint>

#include "gpu/row_join/row_join.cuh"
#include "tensor/meta16q/meta16q_gemm_kernel.cuh"

namespace epsjoin::detail::hetero {

/// Nanoseconds of the device's global timer: the first block's start and the last block's end of
/// each kind. Set start to ~0 and end to 0 before the launch.
struct side_clocks {
  unsigned long long tensor_start, tensor_end, cuda_start, cuda_end;
};

/// The device's global timer, in nanoseconds, for those stamps.
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

inline constexpr unsigned fused_min_dims = 9;

/// Where each kind's blocks lie in the grid.
enum class block_order { interleaved, tensor_first };

/// One launch of both kinds of blocks on `stream` (d >= fused_min_dims). `stage_dims`: the
/// CUDA-core warp's staged prefix (8 or 16, lbjoin's stage_dims; 16 applies from d >= 16).
template <class T>
void launch_fused_blocks(const row_join::join_view<T>& v, const meta16q::meta_view& m,
                         const row_join::work_item* tensor_items, std::uint32_t n_tensor,
                         const row_join::work_item* cuda_items, std::uint32_t n_cuda,
                         const row_join::row_output& out, row_join::pass p, unsigned stage_dims,
                         block_order order, side_clocks* clocks, cudaStream_t stream);

}  // namespace epsjoin::detail::hetero
