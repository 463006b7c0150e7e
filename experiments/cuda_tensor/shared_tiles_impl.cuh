#pragma once
// The kernel behind shared_tiles.cuh, instantiated once per precision (shared_tiles_f32.cu,
// shared_tiles_f64.cu).

#include "base/cuda_check.cuh"
#include "base/expects.hpp"
#include "cuda_tensor/lbjoin_pieces.cuh"
#include "cuda_tensor/meta16q_pieces.cuh"
#include "cuda_tensor/shared_tiles.cuh"
#include "cuda_tensor/warp_shapes.cuh"
#include "cuda_tensor/warp_tasks.hpp"
#include "tensor/fp16/half_convert.cuh"

namespace epsjoin::detail::hetero {

namespace shared_detail {

using row_join::block_threads;
using row_join::pass;
using row_join::warps_per_block;
using row_join::work_item;

constexpr unsigned tile_points = 32;

/// Every thread of the block. The two kinds of warps reach it from different code, so the
/// barrier is PTX's unaligned one (bar.sync and __syncthreads are barrier.sync.aligned, which
/// requires every thread at the same instruction); barrier 1, as nothing else here uses it.
__device__ __forceinline__ void block_barrier() {
  asm volatile("barrier.sync 1, %0;" ::"r"(block_threads) : "memory");
}

/// 32-bit words a candidate's FP16 row takes in the shared tile: four more than its padded
/// dimensions' pairs, so the eight rows a B fragment load reads fall on distinct banks.
__host__ __device__ constexpr unsigned tile_row_words(int d) {
  return fp16::padded_dims(d) / 2 + 4;
}

/// The block's shared copy of candidates [chunk, chunk + m): their FP16 words (rows past m zero,
/// which the MMAs multiply harmlessly) when the block has tensor warps, and their first Prefix
/// coordinates when it has CUDA-core warps.
template <class T, int Prefix>
__device__ __forceinline__ void stage_tile(const row_join::join_view<T>& v,
                                           const meta16q::meta_view& m, std::uint32_t chunk,
                                           unsigned n, bool half_words, bool prefix,
                                           std::uint32_t* tile, T (*stage)[tile_points]) {
  if (half_words) {
    const unsigned words = fp16::padded_dims(v.d) / 2, row_words = tile_row_words(v.d);
    const auto* from = reinterpret_cast<const std::uint32_t*>(m.data_half) +
                       static_cast<std::size_t>(chunk) * words;
    for (unsigned i = threadIdx.x; i < tile_points * words; i += block_threads) {
      const unsigned c = i / words, w = i % words;
      tile[c * row_words + w] = c < n ? __ldg(from + i) : 0u;
    }
  }
  if (prefix) {
    for (unsigned i = threadIdx.x; i < Prefix * tile_points; i += block_threads) {
      const unsigned k = i / tile_points, c = i % tile_points;
      if (c < n) stage[k][c] = v.data_points[static_cast<std::size_t>(chunk + c) * v.d + k];
    }
  }
}

/// What both kinds of warps of a shared task walk: the cell's candidates, tile by tile, each
/// staged by the whole block; `decide(chunk, n)` is the warp's own work on a staged tile.
template <class T, int Prefix, class Decide>
__device__ __forceinline__ void walk_shared_tiles(const row_join::join_view<T>& v,
                                                  const meta16q::meta_view& m, std::uint32_t cell,
                                                  bool half_words, bool prefix, std::uint32_t* tile,
                                                  T (*stage)[tile_points], Decide decide) {
  const std::uint32_t n_ranges = agents::candidate_ranges<T, false>(v, cell);
  for (std::uint32_t r = 0; r < n_ranges; ++r) {
    const auto [b, e] = agents::candidate_range<T, false>(v, cell, r, 0);
    for (std::uint32_t chunk = b; chunk < e; chunk += tile_points) {
      const unsigned n = min(tile_points, e - chunk);
      block_barrier();  // every warp is done with the last tile
      stage_tile<T, Prefix>(v, m, chunk, n, half_words, prefix, tile, stage);
      block_barrier();
      decide(chunk, n);
    }
  }
}

/// A tensor warp of a shared task: its item's rows against each staged tile, in two MMA tiles of
/// 16 candidates; its B fragments from the shared words.
template <class T, pass Pass, int KSteps, int Prefix>
__device__ __forceinline__ void shared_tensor_warp(const row_join::join_view<T>& v,
                                                   const meta16q::meta_view& m, std::uint32_t cell,
                                                   const work_item& item, bool busy, bool prefix,
                                                   std::uint32_t* tile, T (*stage)[tile_points],
                                                   const row_join::row_output& out) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned frag_row = lane >> 2, acc_col = (lane & 3) * 2;
  const unsigned dp = fp16::padded_dims(v.d), row_words = tile_row_words(v.d);
  meta16q::tile_rows rows = meta16q::begin_tile_rows<false, Pass>(item, m, out, frag_row);
  std::uint32_t a_held[KSteps > 0 ? KSteps : 1][2][4];
  if constexpr (KSteps > 0) {
    if (busy) meta16q::hold_query_fragments<KSteps>(a_held, m, dp, rows, acc_col);
  }
  walk_shared_tiles<T, Prefix>(
      v, m, cell, true, prefix, tile, stage, [&](std::uint32_t chunk, unsigned n) {
        if (!busy) return;
        for (unsigned first = 0; first < n; first += 16) {
          const auto b_word = [&](int cb, unsigned ks, std::uint32_t(&bf)[2]) {
            const std::uint32_t* at =
                tile + (first + cb * 8 + frag_row) * row_words + ks * 8 + (lane & 3);
            bf[0] = at[0];
            bf[1] = at[4];  // 8 halves on
          };
          float acc[4][2][2] = {};
          meta16q::multiply_tile<KSteps>(acc, a_held, m, dp, rows, acc_col, b_word);
          meta16q::decide_tile<T, false, Pass>(rows, acc, v, m, out, chunk + first,
                                               min(16u, n - first), acc_col, lane, false);
        }
      });
  if (busy) meta16q::end_tile_rows<false, Pass>(rows, out, lane);
}

/// A CUDA-core warp of a shared task: lbjoin's tiled comparisons against each staged prefix.
template <class T, pass Pass, int Prefix>
__device__ __forceinline__ void shared_cuda_warp(const row_join::join_view<T>& v,
                                                 const meta16q::meta_view& m, std::uint32_t cell,
                                                 const work_item& item, bool busy, bool half_words,
                                                 std::uint32_t* tile, T (*stage)[tile_points],
                                                 const row_join::row_output& out) {
  // An idle warp's query is the item's first position (0 of an empty slot), which it only loads.
  lbjoin::staged_query<T, Prefix, false, Pass> query(v, out, busy ? item : work_item{0, 1, 0},
                                                     threadIdx.x & 31);
  walk_shared_tiles<T, Prefix>(
      v, m, cell, half_words, true, tile, stage, [&](std::uint32_t chunk, unsigned n) {
        if (busy) query.template compare<0, Prefix>(v, out, stage, chunk, n, false);
      });
  if (busy) query.finish(out);
}

template <class T, pass Pass, int KSteps, int Prefix>
__global__ void __launch_bounds__(block_threads, 2)
    shared_tiles_kernel(row_join::join_view<T> v, meta16q::meta_view m, const work_item* slots,
                        const std::uint32_t* shared_cell, unsigned tensor_warps,
                        row_join::row_output out, side_clocks* clocks) {
  extern __shared__ std::uint32_t tile[];  // tile_points rows of tile_row_words(d)
  __shared__ T stage[Prefix][tile_points];
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const bool tensor = warp < tensor_warps;
  const work_item item = slots[blockIdx.x * warps_per_block + warp];
  const bool busy = item.count > 0;
  if (busy && lane == 0) {
    atomicMin(tensor ? &clocks->tensor_start : &clocks->cuda_start, global_ns());
  }
  const std::uint32_t cell = shared_cell[blockIdx.x];
  const auto n_slots = gridDim.x * warps_per_block;
  if (cell == no_shared_cell) {
    if (busy && tensor) {
      meta16q::meta_tiles_warp<T, false, Pass, KSteps>(v, m, slots, n_slots, nullptr, out,
                                                       blockIdx.x);
    } else if (busy) {
      lbjoin::tiled_warp<T, 0, false, Pass, Prefix>(v, slots, n_slots, nullptr, out, blockIdx.x);
    }
  } else if (tensor) {
    shared_tensor_warp<T, Pass, KSteps, Prefix>(v, m, cell, item, busy,
                                                tensor_warps < warps_per_block, tile, stage, out);
  } else {
    shared_cuda_warp<T, Pass, Prefix>(v, m, cell, item, busy, tensor_warps > 0, tile, stage, out);
  }
  if (busy && lane == 0) {
    atomicMax(tensor ? &clocks->tensor_end : &clocks->cuda_end, global_ns());
  }
}

}  // namespace shared_detail

template <class T>
void launch_shared_tiles(const row_join::join_view<T>& v, const meta16q::meta_view& m,
                         const row_join::work_item* slots, const std::uint32_t* shared_cell,
                         std::uint32_t n_tasks, unsigned tensor_warps,
                         const row_join::row_output& out, row_join::pass p, unsigned stage_dims,
                         side_clocks* clocks, cudaStream_t stream) {
  EPSJOIN_EXPECTS(
      v.d >= static_cast<int>(fused_min_dims) && v.d <= static_cast<int>(warps_max_dims),
      "internal: the kernel of two kinds of warps runs from ", fused_min_dims, " to ",
      warps_max_dims, " dimensions");
  if (n_tasks == 0) return;
  const std::size_t tile_bytes =
      shared_detail::tile_points * shared_detail::tile_row_words(v.d) * sizeof(std::uint32_t);
  with_warp_shapes(p, v.d, stage_dims, [&]<row_join::pass Pass, int KSteps, int Prefix>() {
    shared_detail::shared_tiles_kernel<T, Pass, KSteps, Prefix>
        <<<n_tasks, row_join::block_threads, tile_bytes, stream>>>(v, m, slots, shared_cell,
                                                                   tensor_warps, out, clocks);
    EPSJOIN_CHECK_LAUNCH();
  });
}

}  // namespace epsjoin::detail::hetero
