#pragma once
// The kernel behind fused_blocks.cuh, instantiated once per precision (fused_blocks_f32.cu,
// fused_blocks_f64.cu).

#include "base/cub_call.cuh"
#include "base/cuda_check.cuh"
#include "base/expects.hpp"
#include "cuda_tensor/fused_blocks.cuh"
#include "cuda_tensor/lbjoin_pieces.cuh"
#include "cuda_tensor/meta16q_pieces.cuh"
#include "cuda_tensor/warp_shapes.cuh"

namespace epsjoin::detail::hetero {

namespace fused_detail {

using row_join::block_threads;
using row_join::pass;
using row_join::warps_per_block;

/// Block b's kind and its index among the blocks of that kind. Interleaved, the CUDA blocks
/// before b number floor(b * C / B) (C of B blocks), so each kind keeps its share of every stretch
/// of the grid, and hence of every wave the scheduler puts on the SMs.
struct block_role {
  bool tensor;
  std::uint32_t index;
};

__device__ __forceinline__ block_role role_of(std::uint32_t b, std::uint32_t tensor_blocks,
                                              std::uint32_t cuda_blocks, bool interleaved) {
  if (!interleaved) {
    return b < tensor_blocks ? block_role{true, b} : block_role{false, b - tensor_blocks};
  }
  const std::uint64_t total = std::uint64_t{tensor_blocks} + cuda_blocks;
  const auto cuda_before = static_cast<std::uint32_t>(b * std::uint64_t{cuda_blocks} / total);
  const auto cuda_through =
      static_cast<std::uint32_t>((b + 1) * std::uint64_t{cuda_blocks} / total);
  return cuda_through > cuda_before ? block_role{false, cuda_before}
                                    : block_role{true, b - cuda_before};
}

// meta-16q's bounds (two blocks an SM), which the tensor side was tuned under.
template <class T, pass Pass, int KSteps, int Prefix>
__global__ void __launch_bounds__(block_threads, 2)
    fused_blocks_kernel(row_join::join_view<T> v, meta16q::meta_view m,
                        const row_join::work_item* tensor_items, std::uint32_t n_tensor,
                        std::uint32_t tensor_blocks, const row_join::work_item* cuda_items,
                        std::uint32_t n_cuda, std::uint32_t cuda_blocks, bool interleaved,
                        row_join::row_output out, side_clocks* clocks) {
  const block_role role = role_of(blockIdx.x, tensor_blocks, cuda_blocks, interleaved);
  if (threadIdx.x == 0) {
    atomicMin(role.tensor ? &clocks->tensor_start : &clocks->cuda_start, global_ns());
  }
  if (role.tensor) {
    meta16q::meta_tiles_warp<T, false, Pass, KSteps>(v, m, tensor_items, n_tensor, nullptr, out,
                                                     role.index);
  } else {
    lbjoin::tiled_warp<T, 0, false, Pass, Prefix>(v, cuda_items, n_cuda, nullptr, out, role.index);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMax(role.tensor ? &clocks->tensor_end : &clocks->cuda_end, global_ns());
  }
}

}  // namespace fused_detail

template <class T>
void launch_fused_blocks(const row_join::join_view<T>& v, const meta16q::meta_view& m,
                         const row_join::work_item* tensor_items, std::uint32_t n_tensor,
                         const row_join::work_item* cuda_items, std::uint32_t n_cuda,
                         const row_join::row_output& out, row_join::pass p, unsigned stage_dims,
                         block_order order, side_clocks* clocks, cudaStream_t stream) {
  EPSJOIN_EXPECTS(v.d >= fused_min_dims, "internal: the kernel of two kinds of blocks runs from ",
                  fused_min_dims, " dimensions");
  const std::uint32_t tensor_blocks = grid_size(n_tensor, row_join::warps_per_block);
  const std::uint32_t cuda_blocks = grid_size(n_cuda, row_join::warps_per_block);
  if (tensor_blocks + cuda_blocks == 0) return;
  with_warp_shapes(p, v.d, stage_dims, [&]<row_join::pass Pass, int KSteps, int Prefix>() {
    fused_detail::fused_blocks_kernel<T, Pass, KSteps, Prefix>
        <<<tensor_blocks + cuda_blocks, row_join::block_threads, 0, stream>>>(
            v, m, tensor_items, n_tensor, tensor_blocks, cuda_items, n_cuda, cuda_blocks,
            order == block_order::interleaved, out, clocks);
    EPSJOIN_CHECK_LAUNCH();
  });
}

}  // namespace epsjoin::detail::hetero
