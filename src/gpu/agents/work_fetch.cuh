#pragma once
// How a warp of a row-join kernel gets its work items: the one the launch gave it (static), or
// one after the other from an atomic queue (row_join's queue=on), until the items run out. Every
// item-per-warp kernel (lbjoin's tiled kernel, ted-join's and meta-16q's tiles kernels, meta-1q)
// takes its items this way; gds-join's group-per-query kernels take theirs through a group.

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"

namespace epsjoin::detail::agents {

/// The next item for this warp: from the queue when there is one, else the warp's own (first
/// round only). Every lane calls it; all get the same answer.
__device__ __forceinline__ std::uint32_t next_item(unsigned* queue, std::uint32_t static_item,
                                                   bool first_round) {
  if (queue == nullptr) return first_round ? static_item : ~0u;
  std::uint32_t item = 0;
  if ((threadIdx.x & 31) == 0) item = atomicAdd(queue, 1u);
  return __shfl_sync(row_join::full_mask, item, 0);
}

/// The same for a group of lanes smaller than a warp (one query per group): its leader takes
/// from the queue. `Group`: a cooperative_groups thread_block_tile.
template <class Group>
__device__ __forceinline__ std::uint32_t next_group_item(const Group& group, unsigned* queue,
                                                         std::uint32_t static_item,
                                                         bool first_round) {
  if (queue == nullptr) return first_round ? static_item : ~0u;
  std::uint32_t taken = 0;
  if (group.thread_rank() == 0) taken = atomicAdd(queue, 1u);
  return group.shfl(taken, 0);
}

}  // namespace epsjoin::detail::agents
