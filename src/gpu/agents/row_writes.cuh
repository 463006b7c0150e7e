#pragma once
// How the row kernels hand their hits to the pipeline's two passes (kernel_contract.cuh):
// counts in the counting pass (and, when asked, pair records), rows in the filling pass. Under
// LID-UNICOMP (halving) each distance is computed once and both directions are written, through
// per-row atomic cursors.

#include <cstdint>

#include "base/core_links.cuh"
#include "gpu/agents/kernel_contract.cuh"

namespace epsjoin::detail::agents {

using row_join::pass;
using row_join::row_output;
using row_join::work_item;

/// A linking fill's hit (row_output::links): query position `pos`, data position `j` (a
/// self-join: one index, so query_ids maps both to caller ids), linked both ways.
__device__ __forceinline__ void link_hit(const row_output& out, std::uint32_t pos,
                                        std::uint32_t j) {
  link_pair(out.links, out.query_ids, pos, j);
}

/// The same for a kernel that keeps the query's root across its hits (seen_root first).
__device__ __forceinline__ void link_hit(const row_output& out, std::uint32_t pos, std::uint32_t j,
                                        std::uint32_t& pos_root) {
  link_pair(out.links, out.query_ids, pos, j, pos_root);
}

/// Halving fill: the pair goes into both rows, each at its next free place.
__device__ __forceinline__ void write_both_rows(const row_output& out, std::uint32_t pos,
                                                std::uint32_t j, std::uint32_t j_id,
                                                std::uint32_t pos_id) {
  if (out.links) {
    link_hit(out, pos, j);
    return;
  }
  const std::uint32_t a = atomicAdd(out.cursor + pos, 1u);
  out.neighbors[out.row_offset[pos] - out.segment_begin + a] = j_id;
  const std::uint32_t b = atomicAdd(out.cursor + j, 1u);
  out.neighbors[out.row_offset[j] - out.segment_begin + b] = pos_id;
}

/// Where a one-query work item's filling pass writes: the FULL pattern's row of query position
/// `pos` (or, for a linking fill, nothing), or (halving) the query's own id.
template <bool Halving, pass Pass>
struct query_row {
  std::uint32_t* row = nullptr;
  std::uint32_t my_id = 0;
  std::uint32_t pos = 0;
  __device__ __forceinline__ query_row(const row_output& out, std::uint32_t query)
      : pos(query) {
    if constexpr (Pass == pass::fill && Halving) {
      my_id = out.query_ids[pos];
    } else if constexpr (Pass == pass::fill) {
      if (!out.links) row = out.neighbors + (out.row_offset[pos] - out.segment_begin);
    }
  }
  /// FULL fill: data position j, caller id `id`, at place `at` of the row, or linked.
  __device__ __forceinline__ void put(const row_output& out, std::uint32_t at, std::uint32_t j,
                                      std::uint32_t id) const {
    if (out.links) {
      link_hit(out, pos, j);
    } else {
      row[at] = id;
    }
  }
};

/// Counting pass: a query's own hits, added to the reverse hits under halving.
template <bool Halving>
__device__ __forceinline__ void store_count(const row_output& out, std::uint32_t pos,
                                            std::uint32_t found) {
  if constexpr (Halving) {
    atomicAdd(out.counts + pos, found);
  } else {
    out.counts[pos] = found;
  }
}

/// Records a warp's hits (every lane calls it): one atomic per warp for the slots; under halving
/// each hit is recorded for both rows.
template <bool Halving>
__device__ __forceinline__ void record_hit(const row_output& out, bool hit, std::uint32_t pos,
                                           std::uint32_t j, const std::uint32_t* data_ids,
                                           unsigned lanes_below) {
  const unsigned ballot = __ballot_sync(row_join::full_mask, hit);
  if (ballot == 0) return;
  constexpr unsigned per_hit = Halving ? 2 : 1;
  unsigned long long base = 0;
  if ((threadIdx.x & 31) == __ffs(ballot) - 1) {
    base = atomicAdd(out.record_count, static_cast<unsigned long long>(__popc(ballot)) * per_hit);
  }
  base = __shfl_sync(row_join::full_mask, base, __ffs(ballot) - 1);
  if (!hit) return;
  const unsigned long long at =
      base + static_cast<unsigned long long>(__popc(ballot & lanes_below)) * per_hit;
  if (at + per_hit > out.record_capacity) return;
  out.records[at] = {pos, data_ids[j]};
  if constexpr (Halving) out.records[at + 1] = {j, out.query_ids[pos]};
}

/// The queries of an item an MMA warp tile holds: four row blocks of 8, the lane on row
/// rb * 8 + frag_row of each. Rows past the item's count are inactive and point at its first
/// query, so their loads stay in bounds; `id` is the query's caller id where a halving fill
/// writes it into the reverse rows, else 0.
template <bool Halving, pass Pass>
__device__ __forceinline__ void item_row_blocks(const work_item& item, const row_output& out,
                                                unsigned frag_row, bool (&active)[4],
                                                std::uint32_t (&pos)[4], std::uint32_t (&id)[4]) {
#pragma unroll
  for (int rb = 0; rb < 4; ++rb) {
    const unsigned r = rb * 8 + frag_row;
    active[rb] = r < item.count;
    pos[rb] = item.first + (active[rb] ? r : 0);
    id[rb] = Halving && Pass == pass::fill && active[rb] ? out.query_ids[pos[rb]] : 0;
  }
}

/// The lowest set bit of a hit mask, 0-based.
__device__ __forceinline__ int lowest_bit(unsigned bits) { return __ffs(bits) - 1; }
__device__ __forceinline__ int lowest_bit(std::uint64_t bits) {
  return __ffsll(static_cast<long long>(bits)) - 1;
}

/// Filling pass of a GEMM-tiled kernel: a lane's hits in its warp tile (bit rb * 8 + 2 cb + h:
/// query row block rb, candidate column 8 cb + acc_col + h), written into the rows. FULL: each
/// row's places come from `row_fill` (block shared memory, by tile row); halving: both rows.
template <bool Halving, class Bits>
__device__ __forceinline__ void fill_tile_hits(const row_output& out, const std::uint32_t* data_ids,
                                               Bits hits, std::uint32_t q0, unsigned warp_row,
                                               unsigned frag_row, std::uint32_t c0,
                                               unsigned acc_col, std::uint32_t* row_fill) {
  for (Bits bits = hits; bits != 0; bits &= bits - 1) {
    const int bit = lowest_bit(bits);
    const unsigned r = warp_row + (bit >> 3) * 8 + frag_row;
    const std::uint32_t i = q0 + r;
    const std::uint32_t j = c0 + ((bit & 7) >> 1) * 8 + acc_col + (bit & 1);
    if constexpr (Halving) {
      write_both_rows(out, i, j, data_ids[j], out.query_ids[i]);
    } else if (out.links) {
      link_hit(out, i, j);
    } else {
      const std::uint32_t at = atomicAdd(row_fill + r, 1u);
      out.neighbors[out.row_offset[i] - out.segment_begin + at] = data_ids[j];
    }
  }
}

}  // namespace epsjoin::detail::agents
