#pragma once
// cuda-tensor's copy of lbjoin's tiled warp, cut into pieces its kernels drive: the staged query
// and its comparisons (staged_query), and a warp's whole item loop as a function of its block's
// index (tiled_warp) so that a kernel of two kinds of blocks can run it. The library's lbjoin
// keeps its kernel whole: cut so, its f64 fill with a 16-D prefix spilled 36 bytes (ptxas -v).
// The helpers both share (within_staged, within_after_prefix, staged_prefix) are lbjoin's.

#include "gpu/lbjoin/kernels.cuh"

namespace epsjoin::detail::lbjoin {

/// One lane's part of a tiled warp's item: its query (the first StageDims coordinates held),
/// the lanes it shares the query with, and the row so far.
template <class T, int StageDims, bool Halving, pass Pass>
struct staged_query {
  unsigned k, sub;  ///< lanes per query, and this lane's place among them
  bool active;
  std::uint32_t pos;
  unsigned group_mask, lanes_below;
  T q[StageDims];
  const T* q_global;
  std::uint32_t found;  ///< count pass: this lane's hits; fill pass (full): the group's
  std::uint32_t* row;
  std::uint32_t my_id;

  __device__ __forceinline__ staged_query(const join_view<T>& v, const row_output& out,
                                          const work_item& item, unsigned lane) {
    k = lanes_per_query(item.count);
    const unsigned group = lane / k;
    sub = lane % k;
    active = group < item.count;
    pos = item.first + (active ? group : 0);
    group_mask = (k == 32 ? full_mask : ((1u << k) - 1)) << (group * k);
    lanes_below = (1u << lane) - 1;
    q_global = v.query_points + static_cast<std::size_t>(pos) * v.d;
#pragma unroll
    for (int k2 = 0; k2 < StageDims; ++k2) q[k2] = q_global[k2];
    found = 0;
    row = nullptr;
    if constexpr (Pass == pass::fill && !Halving) {
      row = out.neighbors + (out.row_offset[pos] - out.segment_begin);
    }
    my_id = Halving && Pass == pass::fill ? out.query_ids[pos] : 0;
  }

  /// Compares the query with the m staged candidates from position `chunk` (stage[k][c]: the
  /// first StageDims coordinates of candidate c) and delivers the hits. Every lane calls it.
  template <int Dim, int Prefix>
  __device__ __forceinline__ void compare(const join_view<T>& v, const row_output& out,
                                          const T (*stage)[32], std::uint32_t chunk, unsigned m,
                                          bool own_cell) {
    for (unsigned s = 0; s < m; s += k) {
      const unsigned c = s + sub;
      const std::uint32_t j = chunk + c;
      bool hit = active && c < m;
      if (hit) {
        if (own_cell)
          hit = j > pos;
        else if (!Halving && v.self_join)
          hit = j != pos;
      }
      if (hit) {
        if constexpr (Dim > 0) {
          hit = within_staged<T, StageDims>(q, stage, c, v.eps2);
        } else {
          hit = within_after_prefix<T, Prefix>(q, stage, c, q_global,
                                               v.data_points + static_cast<std::size_t>(j) * v.d,
                                               v.d, v.eps2);
        }
      }
      if constexpr (Pass == pass::count) {
        found += hit;
        if (Halving && hit) atomicAdd(out.counts + j, 1u);
        if (out.records != nullptr) record_hit<Halving>(out, hit, pos, j, v.data_ids, lanes_below);
      } else if constexpr (!Halving) {
        const unsigned ballot = __ballot_sync(full_mask, hit);
        if (hit) row[found + __popc(ballot & group_mask & lanes_below)] = v.data_ids[j];
        found += __popc(ballot & group_mask);
      } else {
        if (hit) write_both_rows(out, pos, j, v.data_ids[j], my_id);
      }
    }
  }

  /// The counting pass's row count, once the item's candidates are all compared.
  __device__ __forceinline__ void finish(const row_output& out) {
    if constexpr (Pass == pass::count) {
      std::uint32_t total = found;
      for (unsigned o = k / 2; o > 0; o /= 2) total += __shfl_down_sync(full_mask, total, o);
      if (active && sub == 0) store_count<Halving>(out, pos, total);
    }
  }
};

/// Dim > 0: the dimension is a compile-time constant and candidates are staged in shared memory;
/// Dim == 0: any d > 8. The first Prefix (8 or 16) dimensions (the highest-variance ones: the
/// index stores them first) are staged like a fixed Dim and usually settle the test; the rest of
/// a candidate is read from global memory only while its partial sum stays within eps^2.
/// The work of one warp of block `block` (the kernel's blockIdx.x, or its place among the CUDA-core
/// blocks of cuda-tensor's kernel of two kinds of blocks, fused_blocks.cuh).
template <class T, int Dim, bool Halving, pass Pass, int Prefix = staged_prefix>
__device__ __forceinline__ void tiled_warp(join_view<T> v, const work_item* items,
                                           std::uint32_t n_items, unsigned* queue, row_output out,
                                           std::uint32_t block) {
  constexpr int stage_dims = Dim > 0 ? Dim : Prefix;
  __shared__ T stage_all[warps_per_block][stage_dims][32];
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x >> 5;
  T(*stage)[32] = stage_all[warp];
  const std::uint32_t static_item = block * warps_per_block + warp;

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t i = next_item(queue, static_item, first_round);
    if (i >= n_items) return;
    const work_item item = items[i];
    staged_query<T, stage_dims, Halving, Pass> query(v, out, item, lane);

    // The item's candidate ranges, then (halving self-join) the rest of its own cell from the
    // lowest query's successor on (the others filter j > pos below).
    const std::uint32_t n_ranges = candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const bool own_cell = Halving && r + 1 == n_ranges;
      const auto [b, e] = candidate_range<T, Halving>(v, item.cell, r, item.first + 1);
      for (std::uint32_t chunk = b; chunk < e; chunk += 32) {
        const unsigned m = min(32u, e - chunk);
        __syncwarp();
        if (lane < m) {
          const T* p = v.data_points + static_cast<std::size_t>(chunk + lane) * v.d;
#pragma unroll
          for (int k2 = 0; k2 < stage_dims; ++k2) stage[k2][lane] = p[k2];
        }
        __syncwarp();
        query.template compare<Dim, Prefix>(v, out, stage, chunk, m, own_cell);
      }
    }
    query.finish(out);
  }
}

}  // namespace epsjoin::detail::lbjoin
