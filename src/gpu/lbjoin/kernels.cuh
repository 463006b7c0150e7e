#pragma once
// lbjoin's tiled join kernel. It runs twice per join: a counting pass that sizes every row, then a
// filling pass that writes each row into its place in a CSR segment, so results need no sort,
// no overflow handling and no pair ids on the wire.
//
// tiled_kernel: one warp per work item (up to 32 queries of one cell). The queries share their
//   candidates, so the warp stages 32 candidate points at a time in shared memory with one
//   coalesced load and compares each with all its queries. A cell with n < 32 queries gives each
//   query k = 32 / n lanes (rounded down to a power of two), which split the candidates, so
//   sparse cells keep the warp full.
// The query kernel (K lanes per query, the dissertation's ch. 3) is gds-join's too, and lives
// with the device pieces the kernels share (gpu/agents/query_kernel.cuh).
//
// Rows are written without atomics under the FULL pattern: the lanes of a query take their
// places from a ballot. Under LID-UNICOMP each distance is computed once and both directions
// are written, through per-row atomic cursors (single segment only: the reverse row may be
// anywhere in the layout).

#include <cstdint>

#include "base/emit.cuh"
#include "base/within_eps.hpp"
#include "gpu/agents/candidate_ranges.cuh"
#include "gpu/agents/kernel_contract.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/work_fetch.cuh"

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
  // base/within_eps.hpp's fused step: what nvcc emitted for `sum += diff * diff` (fmad on).
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

/// Dim > 0: the dimension is a compile-time constant and candidates are staged in shared memory;
/// Dim == 0: any d > 8. The first Prefix (8 or 16) dimensions (the highest-variance ones: the
/// index stores them first) are staged like a fixed Dim and usually settle the test; the rest of
/// a candidate is read from global memory only while its partial sum stays within eps^2.
template <class T, int Dim, bool Halving, pass Pass, int Prefix = staged_prefix>
__global__ void __launch_bounds__(block_threads)
    tiled_kernel(join_view<T> v, const work_item* items, std::uint32_t n_items, unsigned* queue,
                 row_output out) {
  constexpr int stage_dims = Dim > 0 ? Dim : Prefix;
  __shared__ T stage_all[warps_per_block][stage_dims][32];
  const unsigned lane = threadIdx.x & 31;
  const unsigned warp = threadIdx.x >> 5;
  T(*stage)[32] = stage_all[warp];
  const std::uint32_t static_item = blockIdx.x * warps_per_block + warp;

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t i = next_item(queue, static_item, first_round);
    if (i >= n_items) return;
    const work_item item = items[i];
    const unsigned k = lanes_per_query(item.count);
    const unsigned group = lane / k, sub = lane % k;
    const bool active = group < item.count;
    const std::uint32_t pos = item.first + (active ? group : 0);
    const unsigned group_mask = (k == 32 ? full_mask : ((1u << k) - 1)) << (group * k);
    const unsigned lanes_below = (1u << lane) - 1;

    T q[stage_dims];
    const T* q_global = v.query_points + static_cast<std::size_t>(pos) * v.d;
#pragma unroll
    for (int k2 = 0; k2 < stage_dims; ++k2) q[k2] = q_global[k2];
    std::uint32_t found = 0;  // count pass: this lane's hits; fill pass (full): the group's
    std::uint32_t* row = nullptr;
    if constexpr (Pass == pass::fill && !Halving) {
      if (!out.links) row = out.neighbors + (out.row_offset[pos] - out.segment_begin);
    }
    const std::uint32_t my_id = Halving && Pass == pass::fill ? out.query_ids[pos] : 0;
    // A linking fill keeps the query's root across its hits.
    std::uint32_t root = Pass == pass::fill && out.links ? seen_root(out.links, pos) : 0;

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
        for (unsigned s = 0; s < m; s += k) {
          const unsigned c = s + sub;
          const std::uint32_t j = chunk + c;
          bool hit = active && c < m;
          if (hit) {
            if (own_cell) hit = j > pos;
            else if (!Halving && v.self_join) hit = j != pos;
          }
          if (hit) {
            if constexpr (Dim > 0) {
              hit = within_staged<T, stage_dims>(q, stage, c, v.eps2);
            } else {
              hit = within_after_prefix<T, Prefix>(
                  q, stage, c, q_global, v.data_points + static_cast<std::size_t>(j) * v.d, v.d,
                  v.eps2);
            }
          }
          if constexpr (Pass == pass::count) {
            found += hit;
            if (Halving && hit) atomicAdd(out.counts + j, 1u);
            if (out.records != nullptr) record_hit<Halving>(out, hit, pos, j, v.data_ids, lanes_below);
          } else if constexpr (!Halving) {
            const unsigned ballot = __ballot_sync(full_mask, hit);
            if (hit && out.links) {
              agents::link_hit(out, pos, j, root);
            } else if (hit) {
              row[found + __popc(ballot & group_mask & lanes_below)] = v.data_ids[j];
            }
            found += __popc(ballot & group_mask);
          } else {
            if (hit && out.links) {
              agents::link_hit(out, pos, j, root);
            } else if (hit) {
              write_both_rows(out, pos, j, v.data_ids[j], my_id);
            }
          }
        }
      }
    }
    if constexpr (Pass == pass::count) {
      for (unsigned o = k / 2; o > 0; o /= 2) found += __shfl_down_sync(full_mask, found, o);
      if (active && sub == 0) store_count<Halving>(out, pos, found);
    }
  }
}

}  // namespace epsjoin::detail::lbjoin
