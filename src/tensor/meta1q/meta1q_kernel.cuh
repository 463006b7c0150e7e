#pragma once
// meta-1q's kernel (META-1Q, dissertation ch. 6): one query against 16 candidates at a time with
// the direct formula on the tensor cores. For each k step of 16 dimensions:
//   1. E = C - q: the candidates' fragment (16 x 16) times an identity (16 x 8), twice (dimensions
//      0-7 and 8-15), onto accumulators that start at -q, so the MMA's sums are the differences;
//   2. the Gram matrix E E^T (16 x 16, two m16n8k16 MMAs), whose diagonal holds the candidates'
//      squared distances, accumulated over the k steps.
// The accumulators of step 1 are, lane by lane, the A fragment of step 2, and their halves are
// its B fragments: the differences never leave registers. Sums in FP32 or in FP16 (HalfSums),
// for the differences and the Gram matrix alike. Only 16 of the 256 Gram entries are used: this
// is the papers' design, kept for comparison with meta-16q's expanded formula. A warp takes the
// queries of one cell (a work item) against each tile of candidates in turn, so a tile is read
// once for up to 32 queries. The decisions are direct_view.cuh's, exact or approximate.

#include <cuda_fp16.h>

#include <cstdint>

#include "gpu/agents/candidate_ranges.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/work_fetch.cuh"
#include "tensor/common/half_mma.cuh"
#include "tensor/fp16/direct_view.cuh"

namespace epsjoin::detail::meta1q {

using row_join::block_threads;
using row_join::full_mask;
using row_join::pass;
using row_join::warps_per_block;
using row_join::work_item;

/// acc (upper: row g, lower: row g + 8; columns 2 t, 2 t + 1, as half2) += A B with FP16
/// accumulators; fragments as hmma_m16n8k16's.
__device__ __forceinline__ void hmma_m16n8k16_half(std::uint32_t& upper, std::uint32_t& lower,
                                                   const std::uint32_t (&a)[4],
                                                   const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
      "{%0,%1};\n"
      : "+r"(upper), "+r"(lower)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();  // the engine refuses devices older than sm_80 before launching
#endif
}

__device__ __forceinline__ std::uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

/// The lane's words of a tile of 16 candidates from position `chunk` (`cols` of them real), k
/// step at dimension `k`: the A fragment {g, 2t}, {g + 8, 2t}, {g, 2t + 8}, {g + 8, 2t + 8}.
__device__ __forceinline__ void load_candidates(std::uint32_t (&a)[4], const __half* data,
                                                unsigned dp, std::uint32_t chunk, unsigned cols,
                                                unsigned lane, unsigned k) {
  const unsigned g = lane >> 2, w = (k + (lane & 3) * 2) / 2;
  const auto* row_g =
      reinterpret_cast<const unsigned*>(data + static_cast<std::size_t>(chunk + g) * dp);
  const auto* row_g8 = row_g + 4 * dp;  // 8 rows on
  a[0] = g < cols ? __ldg(row_g + w) : 0u;
  a[1] = g + 8 < cols ? __ldg(row_g8 + w) : 0u;
  a[2] = g < cols ? __ldg(row_g + w + 4) : 0u;
  a[3] = g + 8 < cols ? __ldg(row_g8 + w + 4) : 0u;
}

/// One k step of one query against a tile: the differences E = C - q through the identity MMAs,
/// then E E^T added to the Gram accumulators. `q_low`, `q_high`: the query's words of
/// dimensions k + 2t and k + 2t + 8.
template <bool HalfSums>
__device__ __forceinline__ void difference_gram_step(const std::uint32_t (&a)[4],
                                                     std::uint32_t q_low, std::uint32_t q_high,
                                                     std::uint32_t one_here, float (&gram)[2][2][2],
                                                     std::uint32_t (&gram_half)[2][2]) {
  // The identity's B fragments: {k 2t, 2t + 1; column g} is one where k == g.
  const std::uint32_t identity_low[2] = {one_here, 0u}, identity_high[2] = {0u, one_here};
  std::uint32_t e[4];  // E's A fragment, as the candidates'
  if constexpr (HalfSums) {
    const std::uint32_t neg_low = q_low ^ 0x80008000u, neg_high = q_high ^ 0x80008000u;
    e[0] = e[1] = neg_low;
    e[2] = e[3] = neg_high;
    hmma_m16n8k16_half(e[0], e[1], a, identity_low);
    hmma_m16n8k16_half(e[2], e[3], a, identity_high);
  } else {
    const float2 ql = __half22float2(*reinterpret_cast<const __half2*>(&q_low));
    const float2 qh = __half22float2(*reinterpret_cast<const __half2*>(&q_high));
    float low_upper[2] = {-ql.x, -ql.y}, low_lower[2] = {-ql.x, -ql.y};
    float high_upper[2] = {-qh.x, -qh.y}, high_lower[2] = {-qh.x, -qh.y};
    tensor::hmma_m16n8k16(low_upper, low_lower, a, identity_low);
    tensor::hmma_m16n8k16(high_upper, high_lower, a, identity_high);
    e[0] = pack_half2(low_upper[0], low_upper[1]);
    e[1] = pack_half2(low_lower[0], low_lower[1]);
    e[2] = pack_half2(high_upper[0], high_upper[1]);
    e[3] = pack_half2(high_lower[0], high_lower[1]);
  }
  // E^T's B fragments: columns 0-7 are E's rows g ({2t}, {2t + 8}), columns 8-15 rows g + 8.
  const std::uint32_t b_first[2] = {e[0], e[2]}, b_second[2] = {e[1], e[3]};
  if constexpr (HalfSums) {
    hmma_m16n8k16_half(gram_half[0][0], gram_half[0][1], e, b_first);
    hmma_m16n8k16_half(gram_half[1][0], gram_half[1][1], e, b_second);
  } else {
    tensor::hmma_m16n8k16(gram[0][0], gram[0][1], e, b_first);
    tensor::hmma_m16n8k16(gram[1][0], gram[1][1], e, b_second);
  }
}

/// The diagonal of the Gram matrix: lanes with (g >> 1) == t get candidate g in `s[0]` (row g,
/// column g of the first block) and g + 8 in `s[1]` (row g + 8, column g of the second).
template <bool HalfSums>
__device__ __forceinline__ void gram_diagonal(const float (&gram)[2][2][2],
                                              const std::uint32_t (&gram_half)[2][2], unsigned lane,
                                              float (&s)[2]) {
  const unsigned h = (lane >> 2) & 1;
  if constexpr (HalfSums) {
    const float2 first = __half22float2(*reinterpret_cast<const __half2*>(&gram_half[0][0]));
    const float2 second = __half22float2(*reinterpret_cast<const __half2*>(&gram_half[1][1]));
    s[0] = h ? first.y : first.x;
    s[1] = h ? second.y : second.x;
  } else {
    // Selects, not gram[..][h]: an index known only at run time would put gram in local memory.
    s[0] = h ? gram[0][0][1] : gram[0][0][0];
    s[1] = h ? gram[1][1][1] : gram[1][1][0];
  }
}

/// A warp takes a work item (up to 32 queries of one grid cell) and walks its candidate ranges
/// 16 candidates at a time; each query of the item meets the tile in turn, one query x 16
/// candidates an MMA group, as META-1Q does, while the candidates' fragments stay in registers
/// (KSteps k steps, d <= 64; 0: loaded again for each query, from L1). Lane r keeps query r's
/// count (or, filling FULL rows, its row's length so far). Halving: a self-join, candidates
/// j > i in the queries' own cell.
template <class T, bool Halving, pass Pass, bool HalfSums, int KSteps>
__global__ void __launch_bounds__(block_threads)
    meta1q_kernel(row_join::join_view<T> v, fp16::direct_view m, const work_item* items,
                  std::uint32_t n_items, unsigned* queue, row_join::row_output out) {
  const unsigned lane = threadIdx.x & 31, g = lane >> 2, t2 = (lane & 3) * 2;
  const bool diagonal = (g >> 1) == (lane & 3);
  const unsigned below = (1u << lane) - 1;
  const std::uint32_t one_here = pack_half2(t2 == g ? 1.0f : 0.0f, t2 + 1 == g ? 1.0f : 0.0f);
  const std::uint32_t static_item = blockIdx.x * warps_per_block + (threadIdx.x >> 5);
  const unsigned dp = fp16::padded_dims(v.d), k_steps = dp / 16;

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t it = agents::next_item(queue, static_item, first_round);
    if (it >= n_items) return;
    const work_item item = items[it];
    const bool mine = lane < item.count;
    const std::uint32_t my_pos = item.first + (mine ? lane : 0);
    const float my_norm = mine ? m.half.query_norms[my_pos].y : 0.0f;
    const std::uint32_t my_id = Halving && Pass == pass::fill && mine ? out.query_ids[my_pos] : 0;
    std::uint32_t my_found = 0;

    const std::uint32_t n_ranges = agents::candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const bool own_cell = Halving && r + 1 == n_ranges;
      const auto [b, e] = agents::candidate_range<T, Halving>(v, item.cell, r, item.first + 1);
      for (std::uint32_t chunk = b; chunk < e; chunk += 16) {
        const unsigned cols = min(16u, e - chunk);
        std::uint32_t a_held[KSteps > 0 ? KSteps : 1][4];
#pragma unroll
        for (int ks = 0; ks < KSteps; ++ks) {
          if (static_cast<unsigned>(ks) < k_steps) {
            load_candidates(a_held[ks], m.half.data_half, dp, chunk, cols, lane, ks * 16);
          }
        }
        float c_norm[2];
#pragma unroll
        for (int which = 0; which < 2; ++which) {
          const unsigned col = g + 8 * which;
          c_norm[which] = col < cols ? __ldg(&m.half.data_norms[chunk + col].y) : 0.0f;
        }
        // The decisions and output of query q (position first + q) against the tile.
        auto decide = [&](unsigned q, const float(&s)[2]) {
          const std::uint32_t pos = item.first + q;
          const float q_norm = __shfl_sync(full_mask, my_norm, q);
          bool hit[2] = {false, false};
          std::uint32_t j[2];
#pragma unroll
          for (int which = 0; which < 2; ++which) {
            const unsigned col = g + 8 * which;
            j[which] = chunk + col;
            const bool candidate =
                diagonal && col < cols &&
                (own_cell ? j[which] > pos : Halving || !v.self_join || j[which] != pos);
            if (candidate) {
              hit[which] = fp16::direct_decide<T, Pass == pass::count>(
                  m, v, s[which], __fadd_ru(q_norm, c_norm[which]), pos, j[which]);
            }
          }
          const unsigned first_hits = __ballot_sync(full_mask, hit[0]);
          const unsigned second_hits = __ballot_sync(full_mask, hit[1]);
          const unsigned hits = __popc(first_hits) + __popc(second_hits);
          if (hits == 0) return;
          if constexpr (Pass == pass::count) {
            if (Halving) {
#pragma unroll
              for (int which = 0; which < 2; ++which)
                if (hit[which]) atomicAdd(out.counts + j[which], 1u);
            }
          } else if (!Halving && out.links) {
#pragma unroll
            for (int which = 0; which < 2; ++which)
              if (hit[which]) agents::link_hit(out, pos, j[which]);
          } else if constexpr (!Halving) {
            std::uint32_t* row = out.neighbors + (out.row_offset[pos] - out.segment_begin) +
                                 __shfl_sync(full_mask, my_found, q);
            if (hit[0]) row[__popc(first_hits & below)] = v.data_ids[j[0]];
            if (hit[1]) row[__popc(first_hits) + __popc(second_hits & below)] = v.data_ids[j[1]];
          } else {
            const std::uint32_t q_id = __shfl_sync(full_mask, my_id, q);
#pragma unroll
            for (int which = 0; which < 2; ++which)
              if (hit[which])
                agents::write_both_rows(out, pos, j[which], v.data_ids[j[which]], q_id);
          }
          if (lane == q) my_found += hits;
        };
        // Two queries at a time: their MMA chains are independent, so each hides the other's
        // latency.
        for (unsigned q = 0; q < item.count; q += 2) {
          const bool second = q + 1 < item.count;
          // The own cell's tiles start past the item's first query: none of this tile may
          // follow the first of these queries (then none follows the second either).
          if (own_cell && chunk + cols - 1 <= item.first + q) continue;
          const auto* q_words = reinterpret_cast<const unsigned*>(
              m.half.query_half + static_cast<std::size_t>(item.first + q) * dp);
          const unsigned* q2_words = second ? q_words + dp / 2 : q_words;
          float gram[2][2][2][2] = {};
          std::uint32_t gram_half[2][2][2] = {};
          auto step = [&](const std::uint32_t(&a)[4], unsigned k) {
            const unsigned w = (k + t2) / 2;
            difference_gram_step<HalfSums>(a, __ldg(q_words + w), __ldg(q_words + w + 4), one_here,
                                           gram[0], gram_half[0]);
            difference_gram_step<HalfSums>(a, __ldg(q2_words + w), __ldg(q2_words + w + 4),
                                           one_here, gram[1], gram_half[1]);
          };
          if constexpr (KSteps > 0) {
#pragma unroll
            for (int ks = 0; ks < KSteps; ++ks) {
              if (static_cast<unsigned>(ks) >= k_steps) break;
              step(a_held[ks], ks * 16);
            }
          } else {
            for (unsigned k = 0; k < dp; k += 16) {
              std::uint32_t a[4];
              load_candidates(a, m.half.data_half, dp, chunk, cols, lane, k);
              step(a, k);
            }
          }
          float s[2];
          gram_diagonal<HalfSums>(gram[0], gram_half[0], lane, s);
          decide(q, s);
          if (second) {
            gram_diagonal<HalfSums>(gram[1], gram_half[1], lane, s);
            decide(q + 1, s);
          }
        }
      }
    }
    if constexpr (Pass == pass::count) {
      if (mine) agents::store_count<Halving>(out, my_pos, my_found);
    }
  }
}

}  // namespace epsjoin::detail::meta1q
