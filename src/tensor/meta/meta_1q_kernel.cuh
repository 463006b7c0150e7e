#pragma once
// meta-1q's kernel (META-1Q, dissertation ch. 6): a warp joins one query against 16 candidates
// at a time with the direct formula on the tensor cores. For each k step of 16 dimensions:
//   1. E = C - q: the candidates' fragment (16 x 16) times an identity (16 x 8), twice (dimensions
//      0-7 and 8-15), onto accumulators that start at -q, so the MMA's sums are the differences;
//   2. the Gram matrix E E^T (16 x 16, two m16n8k16 MMAs), whose diagonal holds the candidates'
//      squared distances, accumulated over the k steps.
// The accumulators of step 1 are, lane by lane, the A fragment of step 2, and their halves are
// its B fragments: the differences never leave registers. Sums in FP32 or in FP16 (HalfSums),
// for the differences and the Gram matrix alike. Only 16 of the 256 Gram entries are used: this
// is the papers' design, kept for comparison with meta-16q's expanded formula. The decisions are
// direct_view.cuh's, exact or approximate.

#include <cuda_fp16.h>

#include <cstdint>

#include "tensor/meta/direct_view.cuh"

namespace epsjoin::detail::meta {

using lbjoin::block_threads;
using lbjoin::warps_per_block;
using lbjoin::work_item;

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

/// The squared distances of a tile of 16 candidates from position `chunk` (`cols` of them real)
/// to the query whose FP16 row is `q`: lanes with (g >> 1) == t (the Gram matrix's diagonal)
/// get candidate g in `s[0]` and g + 8 in `s[1]`; other lanes get garbage.
template <bool HalfSums>
__device__ __forceinline__ void direct_tile(const __half* __restrict__ q,
                                            const __half* __restrict__ data, unsigned dp,
                                            std::uint32_t chunk, unsigned cols, unsigned lane,
                                            float (&s)[2]) {
  const unsigned g = lane >> 2, t2 = (lane & 3) * 2;
  // The identity's B fragments: {k 2t, 2t + 1; column g} is one where k == g.
  const std::uint32_t one_here = pack_half2(t2 == g ? 1.0f : 0.0f, t2 + 1 == g ? 1.0f : 0.0f);
  const std::uint32_t identity_low[2] = {one_here, 0u}, identity_high[2] = {0u, one_here};
  const unsigned* row_g =
      g < cols ? reinterpret_cast<const unsigned*>(data + static_cast<std::size_t>(chunk + g) * dp)
               : nullptr;
  const unsigned* row_g8 =
      g + 8 < cols
          ? reinterpret_cast<const unsigned*>(data + static_cast<std::size_t>(chunk + g + 8) * dp)
          : nullptr;
  const unsigned* q_words = reinterpret_cast<const unsigned*>(q);
  float gram[2][2][2] = {};            // FP32 sums: [column block][upper, lower][h]
  std::uint32_t gram_half[2][2] = {};  // FP16 sums: [column block][upper, lower]
  for (unsigned k = 0; k < dp; k += 16) {
    const unsigned w = (k + t2) / 2;  // the lane's word of dimensions k + 2t, k + 2t + 1
    const std::uint32_t a[4] = {row_g ? __ldg(row_g + w) : 0u, row_g8 ? __ldg(row_g8 + w) : 0u,
                                row_g ? __ldg(row_g + w + 4) : 0u,
                                row_g8 ? __ldg(row_g8 + w + 4) : 0u};
    const std::uint32_t q_low = __ldg(q_words + w), q_high = __ldg(q_words + w + 4);
    std::uint32_t e[4];  // E's A fragment: {g, 2t}, {g + 8, 2t}, {g, 2t + 8}, {g + 8, 2t + 8}
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
      hmma_m16n8k16(low_upper, low_lower, a, identity_low);
      hmma_m16n8k16(high_upper, high_lower, a, identity_high);
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
      hmma_m16n8k16(gram[0][0], gram[0][1], e, b_first);
      hmma_m16n8k16(gram[1][0], gram[1][1], e, b_second);
    }
  }
  // Candidate g: row g, column g of the first block; g + 8: row g + 8, column g of the second.
  const unsigned h = g & 1;
  if constexpr (HalfSums) {
    const float2 first = __half22float2(*reinterpret_cast<const __half2*>(&gram_half[0][0]));
    const float2 second = __half22float2(*reinterpret_cast<const __half2*>(&gram_half[1][1]));
    s[0] = h ? first.y : first.x;
    s[1] = h ? second.y : second.x;
  } else {
    s[0] = gram[0][0][h];
    s[1] = gram[1][1][h];
  }
}

/// One query per work item (item.count == 1). Halving: a self-join, candidates j > i in the
/// query's own cell.
template <class T, bool Halving, pass Pass, bool HalfSums>
__global__ void __launch_bounds__(block_threads)
    meta_1q_kernel(join_view<T> v, direct_view m, const work_item* items, std::uint32_t n_items,
                   unsigned* queue, row_output out) {
  const unsigned lane = threadIdx.x & 31, g = lane >> 2;
  const bool diagonal = (g >> 1) == (lane & 3);
  const unsigned below = (1u << lane) - 1;
  const std::uint32_t static_item = blockIdx.x * warps_per_block + (threadIdx.x >> 5);
  const unsigned dp = padded_dims(v.d);

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t it = lbjoin::next_item(queue, static_item, first_round);
    if (it >= n_items) return;
    const work_item item = items[it];
    const std::uint32_t pos = item.first;
    const __half* q = m.half.query_half + static_cast<std::size_t>(pos) * dp;
    const float q_norm = m.half.query_norms[pos].y;
    std::uint32_t found = 0;
    const lbjoin::query_row<Halving, Pass> to(out, pos);

    const std::uint32_t n_ranges = lbjoin::candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const auto [b, e] = lbjoin::candidate_range<T, Halving>(v, item.cell, r, pos + 1);
      for (std::uint32_t chunk = b; chunk < e; chunk += 16) {
        const unsigned cols = min(16u, e - chunk);
        float s[2];
        direct_tile<HalfSums>(q, m.half.data_half, dp, chunk, cols, lane, s);
        bool hit[2] = {false, false};
        std::uint32_t j[2];
#pragma unroll
        for (int which = 0; which < 2; ++which) {
          const unsigned col = g + 8 * which;
          j[which] = chunk + col;
          if (diagonal && col < cols && (Halving || !v.self_join || j[which] != pos)) {
            const float c_norm = __ldg(&m.half.data_norms[j[which]].y);
            hit[which] = direct_decide<T, Pass == pass::count>(
                m, v, s[which], __fadd_ru(q_norm, c_norm), pos, j[which]);
          }
        }
        const unsigned first_hits = __ballot_sync(full_mask, hit[0]);
        const unsigned second_hits = __ballot_sync(full_mask, hit[1]);
        if constexpr (Pass == pass::count) {
          if (Halving) {
            for (int which = 0; which < 2; ++which)
              if (hit[which]) atomicAdd(out.counts + j[which], 1u);
          }
        } else if constexpr (!Halving) {
          if (hit[0]) to.row[found + __popc(first_hits & below)] = v.data_ids[j[0]];
          if (hit[1]) {
            to.row[found + __popc(first_hits) + __popc(second_hits & below)] = v.data_ids[j[1]];
          }
        } else {
          for (int which = 0; which < 2; ++which)
            if (hit[which])
              lbjoin::write_both_rows(out, pos, j[which], v.data_ids[j[which]], to.my_id);
        }
        found += __popc(first_hits) + __popc(second_hits);
      }
    }
    if constexpr (Pass == pass::count) {
      if (lane == 0) lbjoin::store_count<Halving>(out, pos, found);
    }
  }
}

}  // namespace epsjoin::detail::meta
