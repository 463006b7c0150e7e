#pragma once
// cuda-tensor's copy of meta-16q's tiles warp, cut into pieces its kernels drive: an item's rows
// (tile_rows), the multiply with B fragments from a given source (multiply_tile), a tile's
// decisions (decide_tile), and a warp's whole item loop as a function of its block's index
// (meta_tiles_warp). The library's meta-16q keeps its kernel whole; load_query_fragment is its.

#include "tensor/meta16q/meta16q_tiles_kernel.cuh"

namespace epsjoin::detail::meta16q {

/// The rows of a work item a tiles warp holds: four row blocks of 8, the lane on row
/// rb * 8 + frag_row of each, with their norms and what the passes have found so far.
struct tile_rows {
  bool active[4];
  std::uint32_t pos[4];
  std::uint32_t id[4];  ///< halving fill: the caller's id of the query
  float norm2[4];
  float norm_most, norm2_most;
  std::uint32_t found[4];  ///< count: this lane's hits; fill (full): the row's length so far
};

template <bool Halving, pass Pass>
__device__ __forceinline__ tile_rows begin_tile_rows(const work_item& item, const meta_view& m,
                                                     const row_output& out, unsigned frag_row) {
  tile_rows r;
  agents::item_row_blocks<Halving, Pass>(item, out, frag_row, r.active, r.pos, r.id);
  r.norm_most = 0;
  r.norm2_most = 0;
#pragma unroll
  for (int rb = 0; rb < 4; ++rb) {
    const float2 n = r.active[rb] ? m.query_norms[r.pos[rb]] : float2{0.0f, 0.0f};
    r.norm2[rb] = n.x;
    r.norm2_most = fmaxf(r.norm2_most, n.x);
    r.norm_most = fmaxf(r.norm_most, n.y);
    r.found[rb] = 0;
  }
  return r;
}

/// The query fragments of every k step, held in registers for the whole item (KSteps > 0).
template <int KSteps>
__device__ __forceinline__ void hold_query_fragments(std::uint32_t (&a_held)[KSteps][2][4],
                                                     const meta_view& m, unsigned dp,
                                                     const tile_rows& r, unsigned acc_col) {
  const unsigned k_steps = dp / 16;
#pragma unroll
  for (int ks = 0; ks < KSteps; ++ks) {
#pragma unroll
    for (int mb = 0; mb < 2; ++mb) {
      if (static_cast<unsigned>(ks) < k_steps) {
        load_query_fragment(a_held[ks][mb], m, dp, r.pos, r.active, mb, ks * 16 + acc_col);
      }
    }
  }
}

/// The 32 x 16 tile of dot products of the item's queries with 16 candidates, accumulated into
/// `acc`. `b_word(cb, ks)` gives the lane's two B words of column block cb at k step ks (zero for
/// columns past the tile's candidates): from global memory in meta-16q's own kernel, from the
/// block's shared tile in cuda-tensor's design=warps.
template <int KSteps, class BWords>
__device__ __forceinline__ void multiply_tile(
    float (&acc)[4][2][2], const std::uint32_t (&a_held)[KSteps > 0 ? KSteps : 1][2][4],
    const meta_view& m, unsigned dp, const tile_rows& r, unsigned acc_col, BWords b_word) {
  const unsigned k_steps = dp / 16;
  auto multiply = [&](unsigned ks, const std::uint32_t(&a)[2][4]) {
    std::uint32_t bf[2][2];
#pragma unroll
    for (int cb = 0; cb < 2; ++cb) b_word(cb, ks, bf[cb]);
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
      load_query_fragment(a[0], m, dp, r.pos, r.active, 0, ks * 16 + acc_col);
      load_query_fragment(a[1], m, dp, r.pos, r.active, 1, ks * 16 + acc_col);
      multiply(ks, a);
    }
  }
}

/// The decisions on the lane's 16 pairs of a tile (candidates chunk .. chunk + cols - 1), and
/// what the pass does with them: counts and records, or the rows' writes.
template <class T, bool Halving, pass Pass>
__device__ __forceinline__ void decide_tile(tile_rows& r, const float (&acc)[4][2][2],
                                            const join_view<T>& v, const meta_view& m,
                                            const row_output& out, std::uint32_t chunk,
                                            unsigned cols, unsigned acc_col, unsigned lane,
                                            bool own_cell) {
  const auto columns = load_lane_columns<2>(m, chunk, cols, acc_col, r.norm_most, r.norm2_most);
  const auto& c_norm2 = columns.norm2;
  const float lo = columns.lo, hi = columns.hi;
  bool maybe[4];
  const bool any = rows_maybe_in(acc, c_norm2, r.norm2, hi, maybe);
  unsigned hits = 0;  // bit rb * 4 + 2 cb + h
  if (any) {
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) {
      if (!maybe[rb]) continue;
      const float out_above = __fsub_ru(hi, r.norm2[rb]);
      const float in_below = __fsub_rd(lo, r.norm2[rb]);
      const std::uint32_t pos = r.pos[rb];
#pragma unroll
      for (int cb = 0; cb < 2; ++cb)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float x = fmaf(-2.0f, acc[rb][cb][h], c_norm2[cb][h]);
          if (x > out_above) continue;
          const unsigned col = cb * 8 + acc_col + h;
          const std::uint32_t j = chunk + col;
          const bool candidate = r.active[rb] && col < cols &&
                                 (own_cell ? j > pos : Halving || !v.self_join || j != pos);
          if (candidate && (x <= in_below || fp16::recheck_pair<T, Pass == pass::count>(
                                                 m, v, x + r.norm2[rb], pos, j))) {
            hits |= 1u << (rb * 4 + cb * 2 + h);
          }
        }
    }
  }

  if constexpr (Pass == pass::count) {
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) r.found[rb] += __popc((hits >> (rb * 4)) & 0xfu);
    if (Halving) {
      for (unsigned bits = hits; bits != 0; bits &= bits - 1) {
        const int bit = __ffs(bits) - 1;
        atomicAdd(out.counts + chunk + ((bit & 3) >> 1) * 8 + acc_col + (bit & 1), 1u);
      }
    }
    if (out.records != nullptr) {
      // Indexed by a hit's row block, which is known only at run time: a copy, so that the
      // rows themselves stay in registers.
      std::uint32_t pos[4];
#pragma unroll
      for (int rb = 0; rb < 4; ++rb) pos[rb] = r.pos[rb];
      agents::record_tile<2, Halving>(out, v.data_ids, hits, pos, chunk, acc_col, lane);
    }
  } else if constexpr (Halving) {
    std::uint32_t pos[4], id[4];  // copies, as for the records
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) {
      pos[rb] = r.pos[rb];
      id[rb] = r.id[rb];
    }
    for (unsigned bits = hits; bits != 0; bits &= bits - 1) {
      const int bit = __ffs(bits) - 1;
      const int rb = bit >> 2;
      const std::uint32_t j = chunk + ((bit & 3) >> 1) * 8 + acc_col + (bit & 1);
      agents::write_both_rows(out, pos[rb], j, v.data_ids[j], id[rb]);
    }
  } else {
    // FULL: each row's four lanes write after one another; nothing to do without a hit.
    if (!__any_sync(full_mask, hits != 0)) return;
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) {
      agents::write_row_group(out, v.data_ids, r.pos[rb], (hits >> (rb * 4)) & 0xfu, chunk, acc_col,
                              lane, r.found[rb]);
    }
  }
}

/// The counting pass's row counts, once the item's candidates are all decided.
template <bool Halving, pass Pass>
__device__ __forceinline__ void end_tile_rows(const tile_rows& r, const row_output& out,
                                              unsigned lane) {
  if constexpr (Pass == pass::count) {
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) {
      const std::uint32_t total = agents::row_lanes_sum(r.found[rb]);
      if (r.active[rb] && (lane & 3) == 0) agents::store_count<Halving>(out, r.pos[rb], total);
    }
  }
}

/// KSteps: 1, 2 or 4 when the query fragments of every k step stay in registers (d <= 16, 32,
/// 64), 0 when they are loaded again for each tile (cache hits: the item's rows are few).
/// The work of one warp of block `block` (the kernel's blockIdx.x, or its place among the tensor
/// blocks of cuda-tensor's kernel of two kinds of blocks, fused_blocks.cuh).
template <class T, bool Halving, pass Pass, int KSteps>
__device__ __forceinline__ void meta_tiles_warp(join_view<T> v, meta_view m, const work_item* items,
                                                std::uint32_t n_items, unsigned* queue,
                                                row_output out, std::uint32_t block) {
  constexpr unsigned tile_cols = 16;
  const unsigned lane = threadIdx.x & 31;
  const unsigned frag_row = lane >> 2, acc_col = (lane & 3) * 2;
  const std::uint32_t static_item = block * warps_per_block + (threadIdx.x >> 5);
  const unsigned dp = fp16::padded_dims(v.d);

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t it = agents::next_item(queue, static_item, first_round);
    if (it >= n_items) return;
    const work_item item = items[it];
    tile_rows rows = begin_tile_rows<Halving, Pass>(item, m, out, frag_row);
    std::uint32_t a_held[KSteps > 0 ? KSteps : 1][2][4];
    if constexpr (KSteps > 0) hold_query_fragments<KSteps>(a_held, m, dp, rows, acc_col);

    const std::uint32_t n_ranges = agents::candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const bool own_cell = Halving && r + 1 == n_ranges;
      const auto [b, e] = agents::candidate_range<T, Halving>(v, item.cell, r, item.first + 1);
      for (std::uint32_t chunk = b; chunk < e; chunk += tile_cols) {
        const unsigned cols = min(tile_cols, e - chunk);
        // The candidates' fragments straight from the cell-ordered FP16 copy.
        const auto b_word = [&](int cb, unsigned ks, std::uint32_t(&bf)[2]) {
          const unsigned c = cb * 8 + frag_row;
          const unsigned* at = reinterpret_cast<const unsigned*>(
              m.data_half + static_cast<std::size_t>(chunk + c) * dp + ks * 16 + acc_col);
          bf[0] = c < cols ? __ldg(at) : 0u;
          bf[1] = c < cols ? __ldg(at + 4) : 0u;  // 8 halves on
        };
        float acc[4][2][2] = {};
        multiply_tile<KSteps>(acc, a_held, m, dp, rows, acc_col, b_word);
        decide_tile<T, Halving, Pass>(rows, acc, v, m, out, chunk, cols, acc_col, lane, own_cell);
      }
    }
    end_tile_rows<Halving, Pass>(rows, out, lane);
  }
}

}  // namespace epsjoin::detail::meta16q
