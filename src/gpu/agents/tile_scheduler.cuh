#pragma once
// The persistent query-tile loop of the GEMM-tiled kernels (ted-join's and meta-16q's, for joins
// whose index prunes little): the launch's query positions [lo, hi) cut into tiles of a fixed
// number of rows, blocks taking tiles from an atomic counter in position order until none is
// left. Under LID-UNICOMP (candidates j > i only) the first tiles are the heaviest, so taking
// them first balances the blocks.

#include <cuda_runtime.h>

#include <cstdint>

#include "base/cub_call.cuh"
#include "base/cuda_check.cuh"
#include "base/memory.cuh"
#include "gpu/agents/kernel_contract.cuh"

namespace epsjoin::detail::agents {

/// The query positions a launch covers, [lo, hi) (its items' union: in a one-cell join every
/// segment's items are consecutive), and the next query tile to take.
struct query_span {
  std::uint32_t lo;
  std::uint32_t hi;
  std::uint32_t next_tile;
};

static __global__ void query_span_kernel(const row_join::work_item* items, std::uint32_t n,
                                         query_span* span) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const row_join::work_item item = items[i];
  atomicMin(&span->lo, item.first);
  atomicMax(&span->hi, item.first + item.count);
}

/// Sets `span` (one element, stream-ordered) to the span of `items` with no tile taken yet.
inline void start_query_span(query_span* span, const row_join::work_item* items,
                             std::uint32_t n_items, cudaStream_t stream) {
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(&span->lo, 0xff, sizeof(std::uint32_t), stream));
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(&span->hi, 0, 2 * sizeof(std::uint32_t), stream));
  query_span_kernel<<<grid_size(n_items, 256), 256, 0, stream>>>(items, n_items, span);
  EPSJOIN_CHECK_LAUNCH();
}

/// A block's view of the span: which query tile it works on. Every thread of the block builds
/// one and calls next() together.
class tile_scheduler {
 public:
  __device__ __forceinline__ tile_scheduler(query_span* span, unsigned tile_rows)
      : span_(span),
        lo_(span->lo),
        hi_(span->hi),
        tile_rows_(tile_rows),
        n_tiles_(hi_ > lo_ ? (hi_ - lo_ + tile_rows - 1) / tile_rows : 0) {}

  /// Takes the block's next tile into `q0` (its first query position) and `q_end` (one past its
  /// last); false when none is left. Thread 0 takes it into `taken` (block shared memory);
  /// `reset` clears the block's per-tile shared state before the barrier that publishes it.
  template <class Reset>
  __device__ __forceinline__ bool next(std::uint32_t& taken, Reset&& reset, std::uint32_t& q0,
                                       std::uint32_t& q_end) const {
    if (threadIdx.x == 0) taken = atomicAdd(&span_->next_tile, 1u);
    reset();
    __syncthreads();
    const std::uint32_t tile = taken;
    if (tile >= n_tiles_) return false;
    q0 = lo_ + tile * tile_rows_;
    q_end = min(q0 + tile_rows_, hi_);
    return true;
  }

 private:
  query_span* span_;
  std::uint32_t lo_, hi_;
  unsigned tile_rows_;
  std::uint32_t n_tiles_;
};

}  // namespace epsjoin::detail::agents
