#pragma once
// meta-16q's indexed kernel (META-16Q, dissertation ch. 6): a warp takes a work item (up to 32
// queries of one grid cell) and walks its candidate ranges 16 candidates at a time, computing the
// 32 x 16 tile of FP16-FP32 dot products with m16n8k16 MMAs. The query fragments stay in
// registers for d <= 64 (KSteps k steps of 16 dimensions); the candidates' fragments load
// straight from the cell-ordered FP16 copy (meta_view::data_half), each lane one 32-bit word of
// two dimensions. The decisions are meta16q_gemm_kernel.cuh's: a two-instruction test per pair for
// the common "surely out", the thresholds and the direct-formula re-check only where a pair may be
// in. Fragment layouts: tensor/common/half_mma.cuh's hmma_m16n8k16.

#include <cstdint>

#include "gpu/agents/candidate_ranges.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/tile_writes.cuh"
#include "gpu/agents/work_fetch.cuh"
#include "tensor/meta16q/meta16q_gemm_kernel.cuh"

namespace epsjoin::detail::meta16q {

using row_join::block_threads;
using row_join::warps_per_block;
using row_join::work_item;

/// The lane's A fragment of k step `ks`, row block pair `mb` (rows 16 mb + g and 16 mb + 8 + g),
/// zero for rows past the item.
__device__ __forceinline__ void load_query_fragment(std::uint32_t (&a)[4], const meta_view& m,
                                                    unsigned dp, const std::uint32_t (&q_pos)[4],
                                                    const bool (&q_active)[4], int mb, unsigned k) {
  const auto word = [&](int rb, unsigned at) -> std::uint32_t {
    return q_active[rb] ? __ldg(reinterpret_cast<const unsigned*>(
                              m.query_half + static_cast<std::size_t>(q_pos[rb]) * dp + at))
                        : 0u;
  };
  a[0] = word(2 * mb, k);
  a[1] = word(2 * mb + 1, k);
  a[2] = word(2 * mb, k + 8);
  a[3] = word(2 * mb + 1, k + 8);
}

/// KSteps: 1, 2 or 4 when the query fragments of every k step stay in registers (d <= 16, 32,
/// 64), 0 when they are loaded again for each tile (cache hits: the item's rows are few).
template <class T, bool Halving, pass Pass, int KSteps>
__global__ void __launch_bounds__(block_threads, 2)
    meta_tiles_kernel(join_view<T> v, meta_view m, const work_item* items, std::uint32_t n_items,
                      unsigned* queue, row_output out) {
  constexpr unsigned tile_cols = 16;
  const unsigned lane = threadIdx.x & 31;
  const unsigned frag_row = lane >> 2, acc_col = (lane & 3) * 2;
  const std::uint32_t static_item = blockIdx.x * warps_per_block + (threadIdx.x >> 5);
  const unsigned dp = fp16::padded_dims(v.d), k_steps = dp / 16;

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t it = agents::next_item(queue, static_item, first_round);
    if (it >= n_items) return;
    const work_item item = items[it];

    bool q_active[4];
    std::uint32_t q_pos[4];
    float q_norm2[4];
    float q_norm_most = 0, q_norm2_most = 0;
    std::uint32_t found[4];  // count: this lane's hits; fill (full): the row's length so far
    std::uint32_t q_id[4];   // halving fill: the caller's id of the query
    agents::item_row_blocks<Halving, Pass>(item, out, frag_row, q_active, q_pos, q_id);
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) {
      const float2 n = q_active[rb] ? m.query_norms[q_pos[rb]] : float2{0.0f, 0.0f};
      q_norm2[rb] = n.x;
      q_norm2_most = fmaxf(q_norm2_most, n.x);
      q_norm_most = fmaxf(q_norm_most, n.y);
      found[rb] = 0;
    }
    std::uint32_t a_held[KSteps > 0 ? KSteps : 1][2][4];
#pragma unroll
    for (int ks = 0; ks < KSteps; ++ks) {
#pragma unroll
      for (int mb = 0; mb < 2; ++mb) {
        if (static_cast<unsigned>(ks) < k_steps) {
          load_query_fragment(a_held[ks][mb], m, dp, q_pos, q_active, mb, ks * 16 + acc_col);
        }
      }
    }

    const std::uint32_t n_ranges = agents::candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const bool own_cell = Halving && r + 1 == n_ranges;
      const auto [b, e] = agents::candidate_range<T, Halving>(v, item.cell, r, item.first + 1);
      for (std::uint32_t chunk = b; chunk < e; chunk += tile_cols) {
        const unsigned cols = min(tile_cols, e - chunk);
        float acc[4][2][2] = {};
        auto multiply = [&](unsigned ks, const std::uint32_t(&a)[2][4]) {
          std::uint32_t bf[2][2];
#pragma unroll
          for (int cb = 0; cb < 2; ++cb) {
            const unsigned c = cb * 8 + frag_row;
            const unsigned* at = reinterpret_cast<const unsigned*>(
                m.data_half + static_cast<std::size_t>(chunk + c) * dp + ks * 16 + acc_col);
            bf[cb][0] = c < cols ? __ldg(at) : 0u;
            bf[cb][1] = c < cols ? __ldg(at + 4) : 0u;  // 8 halves on
          }
#pragma unroll
          for (int mb = 0; mb < 2; ++mb)
#pragma unroll
            for (int cb = 0; cb < 2; ++cb)
              tensor::hmma_m16n8k16(acc[2 * mb][cb], acc[2 * mb + 1][cb], a[mb], bf[cb]);
        };
        if constexpr (KSteps > 0) {
#pragma unroll
          for (int ks = 0; ks < KSteps; ++ks) {
            if (static_cast<unsigned>(ks) >= k_steps) break;
            multiply(ks, a_held[ks]);
          }
        } else {
          for (unsigned ks = 0; ks < k_steps; ++ks) {
            std::uint32_t a[2][4];
            load_query_fragment(a[0], m, dp, q_pos, q_active, 0, ks * 16 + acc_col);
            load_query_fragment(a[1], m, dp, q_pos, q_active, 1, ks * 16 + acc_col);
            multiply(ks, a);
          }
        }

        // Epilogue: the lane's 16 pairs.
        const auto columns =
            load_lane_columns<2>(m, chunk, cols, acc_col, q_norm_most, q_norm2_most);
        const auto& c_norm2 = columns.norm2;
        const float lo = columns.lo, hi = columns.hi;
        bool maybe[4];
        const bool any = rows_maybe_in(acc, c_norm2, q_norm2, hi, maybe);
        unsigned hits = 0;  // bit rb * 4 + 2 cb + h
        if (any) {
#pragma unroll
          for (int rb = 0; rb < 4; ++rb) {
            if (!maybe[rb]) continue;
            const float out_above = __fsub_ru(hi, q_norm2[rb]);
            const float in_below = __fsub_rd(lo, q_norm2[rb]);
            const std::uint32_t pos = q_pos[rb];
#pragma unroll
            for (int cb = 0; cb < 2; ++cb)
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const float x = fmaf(-2.0f, acc[rb][cb][h], c_norm2[cb][h]);
                if (x > out_above) continue;
                const unsigned col = cb * 8 + acc_col + h;
                const std::uint32_t j = chunk + col;
                const bool candidate = q_active[rb] && col < cols &&
                                       (own_cell ? j > pos : Halving || !v.self_join || j != pos);
                if (candidate && (x <= in_below || fp16::recheck_pair<T, Pass == pass::count>(
                                                       m, v, x + q_norm2[rb], pos, j))) {
                  hits |= 1u << (rb * 4 + cb * 2 + h);
                }
              }
          }
        }

        if constexpr (Pass == pass::count) {
#pragma unroll
          for (int rb = 0; rb < 4; ++rb) found[rb] += __popc((hits >> (rb * 4)) & 0xfu);
          if (Halving) {
            for (unsigned bits = hits; bits != 0; bits &= bits - 1) {
              const int bit = __ffs(bits) - 1;
              atomicAdd(out.counts + chunk + ((bit & 3) >> 1) * 8 + acc_col + (bit & 1), 1u);
            }
          }
          if (out.records != nullptr) {
            agents::record_tile<2, Halving>(out, v.data_ids, hits, q_pos, chunk, acc_col, lane);
          }
        } else if constexpr (Halving) {
          for (unsigned bits = hits; bits != 0; bits &= bits - 1) {
            const int bit = __ffs(bits) - 1;
            const int rb = bit >> 2;
            const std::uint32_t j = chunk + ((bit & 3) >> 1) * 8 + acc_col + (bit & 1);
            agents::write_both_rows(out, q_pos[rb], j, v.data_ids[j], q_id[rb]);
          }
        } else {
          // FULL: each row's four lanes write after one another; nothing to do without a hit.
          if (!__any_sync(full_mask, hits != 0)) continue;
#pragma unroll
          for (int rb = 0; rb < 4; ++rb) {
            agents::write_row_group(out, v.data_ids, q_pos[rb], (hits >> (rb * 4)) & 0xfu, chunk,
                                    acc_col, lane, found[rb]);
          }
        }
      }
    }
    if constexpr (Pass == pass::count) {
#pragma unroll
      for (int rb = 0; rb < 4; ++rb) {
        const std::uint32_t total = agents::row_lanes_sum(found[rb]);
        if (q_active[rb] && (lane & 3) == 0) agents::store_count<Halving>(out, q_pos[rb], total);
      }
    }
  }
}

}  // namespace epsjoin::detail::meta16q
