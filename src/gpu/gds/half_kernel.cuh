#pragma once
// gds-join in FP16 on CUDA cores (dissertation table 6.3's CUDA-core rows): lbjoin's query
// kernel over the FP16 copies of the points (tensor/fp16/half_points.cuh), the direct formula
// with FP16 differences and sums in FP16 (half2 fused multiply-adds) or FP32, eight dimensions a
// load, and an exit once the partial sum passes the pair's upper threshold (sums of squares only
// grow). The decisions are tensor/fp16/direct_view.cuh's, exact or approximate. Lanes per query
// are a launch argument (1-32, a power of two) rather than a template one: the lanes of a query
// agree through masks of their own group.

#include <cuda_fp16.h>

#include <cstdint>

#include "gpu/agents/candidate_ranges.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/work_fetch.cuh"
#include "tensor/fp16/direct_view.cuh"

namespace epsjoin::detail::gds {

using row_join::block_threads;
using row_join::join_view;
using row_join::pass;
using row_join::row_output;
using row_join::work_item;

/// The FP16 direct-formula squared distance between two FP16 rows of `dp` (a multiple of 16)
/// dimensions, or a partial sum above `stop` once one is.
template <bool HalfSums>
__device__ __forceinline__ float half_distance(const __half* __restrict__ a,
                                               const __half* __restrict__ b, unsigned dp,
                                               float stop) {
  const auto* a8 = reinterpret_cast<const uint4*>(a);
  const auto* b8 = reinterpret_cast<const uint4*>(b);
  __half2 half_sum[4] = {};
  float float_sum[8] = {};
  float total = 0;
  for (unsigned w = 0; w < dp / 8; w += 2) {
#pragma unroll
    for (unsigned u = 0; u < 2; ++u) {
      const uint4 x = __ldg(a8 + w + u), y = __ldg(b8 + w + u);
      const unsigned xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const __half2 diff = __hsub2(*reinterpret_cast<const __half2*>(&xs[i]),
                                     *reinterpret_cast<const __half2*>(&ys[i]));
        if constexpr (HalfSums) {
          half_sum[i] = __hfma2(diff, diff, half_sum[i]);
        } else {
          const float2 f = __half22float2(diff);
          float_sum[2 * i] = fmaf(f.x, f.x, float_sum[2 * i]);
          float_sum[2 * i + 1] = fmaf(f.y, f.y, float_sum[2 * i + 1]);
        }
      }
    }
    if constexpr (HalfSums) {
      const __half2 pair =
          __hadd2(__hadd2(half_sum[0], half_sum[1]), __hadd2(half_sum[2], half_sum[3]));
      total = __half2float(__hadd(__low2half(pair), __high2half(pair)));
    } else {
      total = ((float_sum[0] + float_sum[1]) + (float_sum[2] + float_sum[3])) +
              ((float_sum[4] + float_sum[5]) + (float_sum[6] + float_sum[7]));
    }
    if (total > stop) break;
  }
  return total;
}

/// `lanes` lanes per query (one work item of one query each). Halving: a self-join, candidates
/// j > i in the query's own cell.
template <class T, bool Halving, pass Pass, bool HalfSums>
__global__ void __launch_bounds__(block_threads)
    half_query_kernel(join_view<T> v, fp16::direct_view m, const work_item* items,
                      std::uint32_t n_items, unsigned* queue, row_output out, unsigned lanes) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned sub = lane & (lanes - 1), leader = lane - sub;
  const unsigned group = lanes == 32 ? row_join::full_mask : ((1u << lanes) - 1) << leader;
  const unsigned below = (1u << lane) - 1;
  const std::uint32_t static_item = (blockIdx.x * block_threads + threadIdx.x) / lanes;
  const unsigned dp = fp16::padded_dims(v.d);

  for (bool first_round = true;; first_round = false) {
    std::uint32_t i;
    if (queue == nullptr) {
      i = first_round ? static_item : ~0u;
    } else {
      std::uint32_t taken = 0;
      if (sub == 0) taken = atomicAdd(queue, 1u);
      i = __shfl_sync(group, taken, leader);
    }
    if (i >= n_items) return;
    const work_item item = items[i];
    const std::uint32_t pos = item.first;
    const __half* q = m.half.query_half + static_cast<std::size_t>(pos) * dp;
    const float q_norm = m.half.query_norms[pos].y;
    std::uint32_t found = 0;
    const agents::query_row<Halving, Pass> to(out, pos);
    const std::uint32_t n_ranges = agents::candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const auto [b, e] = agents::candidate_range<T, Halving>(v, item.cell, r, pos + 1);
      for (std::uint32_t base = b; base < e; base += lanes) {
        const std::uint32_t j = base + sub;
        bool hit = j < e && !(!Halving && v.self_join && j == pos);
        if (hit) {
          float lo, hi;
          fp16::direct_thresholds(m.band, __fadd_ru(q_norm, __ldg(&m.half.data_norms[j].y)), lo,
                                  hi);
          // Once the partial sum passes hi the pair is out, in both modes (hi >= eps^2).
          const float s = half_distance<HalfSums>(
              q, m.half.data_half + static_cast<std::size_t>(j) * dp, dp, hi);
          hit = fp16::direct_decide_within<T, Pass == pass::count>(m, v, s, lo, hi, pos, j);
        }
        if constexpr (Pass == pass::count) {
          found += hit;
          if (Halving && hit) atomicAdd(out.counts + j, 1u);
        } else if constexpr (!Halving) {
          const unsigned ballot = __ballot_sync(group, hit);
          if (hit) to.put(out, found + __popc(ballot & below), j, v.data_ids[j]);
          found += __popc(ballot);
        } else {
          if (hit) agents::write_both_rows(out, pos, j, v.data_ids[j], to.my_id);
        }
      }
    }
    if constexpr (Pass == pass::count) {
      for (unsigned offset = lanes / 2; offset > 0; offset /= 2)
        found += __shfl_xor_sync(group, found, offset);
      if (sub == 0) agents::store_count<Halving>(out, pos, found);
    }
  }
}

}  // namespace epsjoin::detail::gds
