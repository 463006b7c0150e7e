#pragma once
// lbjoin's join kernels. Both run twice per join: a counting pass that sizes every row, then a
// filling pass that writes each row into its place in a CSR segment, so results need no sort,
// no overflow handling and no pair ids on the wire.
//
// tiled_kernel: one warp per work item (up to 32 queries of one cell). The queries share their
//   candidates, so the warp stages 32 candidate points at a time in shared memory with one
//   coalesced load and compares each with all its queries. A cell with n < 32 queries gives each
//   query k = 32 / n lanes (rounded down to a power of two), which split the candidates, so
//   sparse cells keep the warp full.
// query_kernel: the dissertation's scheme (ch. 3): K lanes per query, each query on its own
//   candidates from global memory, queries taken in the given order or from a work queue.
//
// Rows are written without atomics under the FULL pattern: the lanes of a query take their
// places from a ballot. Under LID-UNICOMP each distance is computed once and both directions
// are written, through per-row atomic cursors (single segment only: the reverse row may be
// anywhere in the layout).

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>

#include "core/within_eps.hpp"
#include "gpu/agents/candidate_ranges.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/work_fetch.cuh"
#include "gpu/emit.cuh"
#include "gpu/gds/distance.cuh"
#include "gpu/row_join/kernel_contract.cuh"

namespace epsjoin::detail::lbjoin {

using row_join::block_threads;
using row_join::full_mask;
using row_join::join_view;
using row_join::pass;
using row_join::row_output;
using row_join::warps_per_block;
using row_join::work_item;

// The device pieces every row kernel shares (gpu/agents/).
using agents::candidate_range;
using agents::candidate_ranges;
using agents::next_group_item;
using agents::next_item;
using agents::query_row;
using agents::record_hit;
using agents::store_count;
using agents::write_both_rows;

__device__ __forceinline__ unsigned lanes_per_query(unsigned queries) {
  // Largest power of two k with queries * k <= 32.
  const unsigned log2_up = 32 - __clz(queries - 1);  // ceil(log2(queries)), 0 for 1
  return 32u >> log2_up;
}

/// Squared distance <= eps2 with the query in registers and the candidate in shared memory.
template <class T, int Dim>
__device__ __forceinline__ bool within_staged(const T (&q)[Dim], const T (*stage)[32], unsigned c,
                                              T eps2) {
  // core/within_eps.hpp's fused step: what nvcc emitted for `sum += diff * diff` (fmad on).
  T sum = 0;
#pragma unroll
  for (int k = 0; k < Dim; ++k) sum = add_square<rounding::fused>(sum, q[k], stage[k][c]);
  return sum <= eps2;
}

/// The staged prefix of a high-dimensional point (8 dimensions, or 16 with stage_dims=16),
/// then the rest from global memory (d > 8), checked against eps^2 every 8 dimensions.
inline constexpr int staged_prefix = 8;

template <class T, int Prefix>
__device__ __forceinline__ bool within_after_prefix(const T (&q)[Prefix], const T (*stage)[32],
                                                    unsigned c, const T* __restrict__ q_rest,
                                                    const T* __restrict__ p_rest, int d, T eps2) {
  T sum = 0;
#pragma unroll
  for (int k = 0; k < Prefix; ++k) {
    const T diff = q[k] - stage[k][c];
    sum += diff * diff;
    if (k % 8 == 7 && k + 1 < Prefix && sum > eps2) return false;
  }
  for (int k = Prefix; k < d && sum <= eps2; k += 4) {
    // Four at a time, checked once per four: the tail past d is skipped by the bounds.
    const int end = min(k + 4, d);
    for (int k2 = k; k2 < end; ++k2) {
      const T diff = q_rest[k2] - p_rest[k2];
      sum += diff * diff;
    }
  }
  return sum <= eps2;
}

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
/// blocks of cuda-tensor's kernel of two kinds of blocks, hetero/fused_blocks.cuh).
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

template <class T, int Dim, bool Halving, pass Pass, int Prefix = staged_prefix>
__global__ void __launch_bounds__(block_threads)
    tiled_kernel(join_view<T> v, const work_item* items, std::uint32_t n_items, unsigned* queue,
                 row_output out) {
  tiled_warp<T, Dim, Halving, Pass, Prefix>(v, items, n_items, queue, out, blockIdx.x);
}

/// K lanes per query; one query per group of K lanes, in `items` order (each item one query).
/// Ilp: gds-join's distance test (gds/distance.cuh) instead of the plain loop.
template <class T, unsigned K, bool Halving, pass Pass, bool Ilp>
__global__ void __launch_bounds__(block_threads)
    query_kernel(join_view<T> v, const work_item* items, std::uint32_t n_items, unsigned* queue,
                 row_output out) {
  namespace cg = cooperative_groups;
  const cg::thread_block_tile<K> tile = cg::tiled_partition<K>(cg::this_thread_block());
  const unsigned sub = tile.thread_rank();
  const std::uint32_t static_item = (blockIdx.x * block_threads + threadIdx.x) / K;
  const unsigned below = (1u << sub) - 1;

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t i = next_group_item(tile, queue, static_item, first_round);
    if (i >= n_items) return;
    const work_item item = items[i];
    const std::uint32_t pos = item.first;
    const T* q = v.query_points + static_cast<std::size_t>(pos) * v.d;
    std::uint32_t found = 0;
    const query_row<Halving, Pass> to(out, pos);
    const std::uint32_t n_ranges = candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const auto [b, e] = candidate_range<T, Halving>(v, item.cell, r, pos + 1);
      for (std::uint32_t base = b; base < e; base += K) {
        const std::uint32_t j = base + sub;
        bool hit = j < e && !(!Halving && v.self_join && j == pos);
        if (hit) {
          const T* p = v.data_points + static_cast<std::size_t>(j) * v.d;
          hit = Ilp ? gds::within_ilp(q, p, v.d, v.eps2) : within(q, p, v.d, v.eps2);
        }
        if constexpr (Pass == pass::count) {
          found += hit;
          if (Halving && hit) atomicAdd(out.counts + j, 1u);
        } else if constexpr (!Halving) {
          const unsigned ballot = tile.ballot(hit);
          if (hit) to.row[found + __popc(ballot & below)] = v.data_ids[j];
          found += __popc(ballot);
        } else {
          if (hit) write_both_rows(out, pos, j, v.data_ids[j], to.my_id);
        }
      }
    }
    if constexpr (Pass == pass::count) {
      found = cg::reduce(tile, found, cg::plus<std::uint32_t>());
      if (sub == 0) store_count<Halving>(out, pos, found);
    }
  }
}

}  // namespace epsjoin::detail::lbjoin
