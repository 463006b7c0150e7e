#pragma once
// Writing an MMA tile's hits, where the four lanes g 4 .. g 4 + 3 share an accumulator row
// (columns 2 t and 2 t + 1 of each 8-column block): as rows under FULL, or as pair records with
// one warp scan and one atomic per tile. ted-join's and meta-16q's kernels share them.

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"
#include "gpu/agents/row_writes.cuh"

namespace epsjoin::detail::agents {

using row_join::full_mask;
using row_join::row_output;

/// A warp's places in the record buffer, for `mine` records of each lane: the lane's first place
/// (an exclusive scan over the warp, one atomic for the whole warp). Every lane calls it.
__device__ __forceinline__ unsigned long long reserve_records(const row_output& out, unsigned mine,
                                                              unsigned lane) {
  unsigned before = mine;  // inclusive scan; lane 31 ends with the warp's total
#pragma unroll
  for (unsigned o = 1; o < 32; o *= 2) {
    const unsigned up = __shfl_up_sync(full_mask, before, o);
    if (lane >= o) before += up;
  }
  unsigned long long base = 0;
  if (lane == 31) base = atomicAdd(out.record_count, static_cast<unsigned long long>(before));
  base = __shfl_sync(full_mask, base, 31);
  return base + before - mine;
}

/// Fill under FULL: the four lanes of an accumulator row (query `pos`) share its row; each writes
/// its hits (bit 2 cb + h: candidate chunk + 8 cb + acc_col + h) after those of the lanes before
/// it in the group. `found`: the row's length so far, advanced by the group's hits. Every lane
/// calls it.
__device__ __forceinline__ void write_row_group(const row_output& out,
                                                const std::uint32_t* data_ids, std::uint32_t pos,
                                                unsigned row_hits, std::uint32_t chunk,
                                                unsigned acc_col, unsigned lane,
                                                std::uint32_t& found) {
  const unsigned mine = __popc(row_hits);
  unsigned before = mine;
  unsigned up = __shfl_up_sync(full_mask, before, 1, 4);
  if ((lane & 3) >= 1) before += up;
  up = __shfl_up_sync(full_mask, before, 2, 4);
  if ((lane & 3) >= 2) before += up;
  const unsigned group_total = __shfl_sync(full_mask, before, 3, 4);
  before -= mine;
  if (row_hits != 0 && out.links) {
    for (unsigned bits = row_hits; bits != 0; bits &= bits - 1) {
      const int bit = __ffs(bits) - 1;
      link_hit(out, pos, chunk + (bit >> 1) * 8 + acc_col + (bit & 1));
    }
  } else if (row_hits != 0) {
    std::uint32_t* row = out.neighbors + (out.row_offset[pos] - out.segment_begin);
    unsigned at = found + before;
    for (unsigned bits = row_hits; bits != 0; bits &= bits - 1) {
      const int bit = __ffs(bits) - 1;
      row[at++] = data_ids[chunk + (bit >> 1) * 8 + acc_col + (bit & 1)];
    }
  }
  found += group_total;
}

/// The sum of `x` over the four lanes that share an accumulator row (lanes 4 g .. 4 g + 3).
__device__ __forceinline__ std::uint32_t row_lanes_sum(std::uint32_t x) {
  x += __shfl_xor_sync(full_mask, x, 1);
  return x + __shfl_xor_sync(full_mask, x, 2);
}

/// Counting pass with records: every hit of the lane's tile (bit rb * 2 ColBlocks + 2 cb + h)
/// recorded, with one warp scan and one atomic per tile instead of one per pair; under
/// halving each hit is recorded for both rows.
template <int ColBlocks, bool Halving>
__device__ __forceinline__ void record_tile(const row_output& out, const std::uint32_t* data_ids,
                                            unsigned tile_hits, const std::uint32_t (&q_pos)[4],
                                            std::uint32_t chunk, unsigned acc_col, unsigned lane) {
  constexpr unsigned per_hit = Halving ? 2 : 1;
  constexpr int hits_per_row_block = ColBlocks * 2;
  const unsigned mine = __popc(tile_hits) * per_hit;
  if (!__any_sync(full_mask, mine != 0)) return;
  unsigned long long at = reserve_records(out, mine, lane);
  for (unsigned bits = tile_hits; bits != 0; bits &= bits - 1) {
    const int bit = __ffs(bits) - 1;
    const int rb = bit / hits_per_row_block, in_block = bit % hits_per_row_block;
    const std::uint32_t j = chunk + (in_block >> 1) * 8 + acc_col + (in_block & 1);
    if (at + per_hit <= out.record_capacity) {
      out.records[at] = {q_pos[rb], data_ids[j]};
      if constexpr (Halving) out.records[at + 1] = {j, out.query_ids[q_pos[rb]]};
    }
    at += per_hit;
  }
}

/// Records a tile's hits with one atomic per warp (bit rb * 8 + 2 cb + h of `hits`: query row
/// block rb, candidate column 8 cb + acc_col + h); under halving each hit for both rows.
template <bool Halving>
__device__ __forceinline__ void record_hits(const row_output& out, const std::uint32_t* data_ids,
                                            unsigned hits, std::uint32_t row0, std::uint32_t col0,
                                            unsigned acc_col, unsigned lane) {
  constexpr unsigned per_hit = Halving ? 2 : 1;
  const unsigned mine = __popc(hits) * per_hit;
  if (!__any_sync(full_mask, mine != 0)) return;
  unsigned long long at = reserve_records(out, mine, lane);
  for (unsigned bits = hits; bits != 0; bits &= bits - 1) {
    const int bit = __ffs(bits) - 1;
    const std::uint32_t i = row0 + (bit >> 3) * 8;
    const std::uint32_t j = col0 + ((bit & 7) >> 1) * 8 + acc_col + (bit & 1);
    if (at + per_hit <= out.record_capacity) {
      out.records[at] = {i, data_ids[j]};
      if constexpr (Halving) out.records[at + 1] = {j, out.query_ids[i]};
    }
    at += per_hit;
  }
}

}  // namespace epsjoin::detail::agents
