#pragma once
// meta-16q's kernel: every pair's distance from FP16 coordinates with FP32 accumulation on the
// tensor cores (dissertation ch. 6, the expanded formula of META-16Q), tiled like a GEMM as
// ted-join's one-cell kernel is (ted_gemm_kernel.cuh; the query spans, copies and record output
// both use are gpu/agents'). A block owns 128 queries, or 64 where those do not fit (all their
// dimensions resident in shared memory), and streams the candidates through a three-stage
// cp.async pipeline, 128 candidates x 32 dimensions a stage; each of its 8 warps computes a
// 64 x 32 (or 32 x 32) tile with m16n8k16 MMAs (FP16 in, FP32 accumulators). The epilogue decides
// each pair from s' = |q~|^2 + |c~|^2 - 2 q~.c~ and the thresholds of half_bound.hpp: surely out,
// surely in, or re-checked with the direct formula on the original coordinates (so the result is
// the oracle's); the approximate mode takes s' <= eps^2.
//
// Points are stored converted (meta_view::*_half: [n x padded_dims], zero past d), rows 16-byte
// aligned, so every copy moves 16 bytes. Shared-memory rows are padded to a stride of 4 (mod 8)
// 32-bit words: the 8 rows x 4 words a fragment load reads then fall in distinct banks.

#include <cuda_fp16.h>

#include <cstdint>

#include "base/emit.cuh"
#include "gpu/agents/async_copy.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/tile_scheduler.cuh"
#include "gpu/agents/tile_writes.cuh"
#include "tensor/common/half_mma.cuh"
#include "tensor/fp16/half_bound.hpp"
#include "tensor/fp16/half_convert.cuh"
#include "tensor/fp16/half_recheck.cuh"

namespace epsjoin::detail::meta16q {

using agents::query_span;
using row_join::full_mask;
using row_join::join_view;
using row_join::pass;
using row_join::row_output;

/// Warps are 2 x 4 over a block tile of (2 x warp rows) queries x 128 candidates; a warp's tile
/// is RowBlocks x 8 query rows (4: 32, 8: 64) x 32 candidates. The 64-row tile reads 24 shared
/// words for 16 MMAs where the 32-row one reads 16 for 8: shared-memory bandwidth is what bounds
/// these kernels at high d.
inline constexpr unsigned tile_candidates = 128;
inline constexpr unsigned stage_dims = 32;  // two k steps of m16n8k16
inline constexpr unsigned stages = 3;
inline constexpr unsigned warps_across = tile_candidates / 32;
inline constexpr unsigned threads = 2 * warps_across * 32;
inline constexpr unsigned stage_stride = stage_dims + 8;  // halves
inline constexpr unsigned halves_per_copy = 8;            // 16 bytes
inline constexpr unsigned max_tile_queries = 128;

__host__ __device__ constexpr unsigned tile_queries(int row_blocks) {
  return 2 * 8 * static_cast<unsigned>(row_blocks);
}

/// Halves between two queries' rows in shared memory.
__host__ __device__ constexpr unsigned query_stride(int d) { return fp16::padded_dims(d) + 8; }

/// Dynamic shared memory of a block; the static part (row_fill, row_found, taken_tile) comes on
/// top.
constexpr std::size_t shared_bytes(int d, int row_blocks) {
  return sizeof(__half) * (std::size_t{tile_queries(row_blocks)} * query_stride(d) +
                           std::size_t{stages} * tile_candidates * stage_stride);
}
inline constexpr std::size_t static_shared_bytes = 1536;  // at least the kernel's own arrays

/// The largest d whose tiles fit `shared_limit` bytes (a block's opt-in limit).
constexpr std::size_t max_dims(std::size_t shared_limit, int row_blocks) {
  const std::size_t stage_halves = std::size_t{stages} * tile_candidates * stage_stride;
  const std::size_t rows = tile_queries(row_blocks);
  if (shared_limit < static_shared_bytes) return 0;
  const std::size_t halves = (shared_limit - static_shared_bytes) / sizeof(__half);
  if (halves < stage_halves + rows * 24) return 0;
  return ((halves - stage_halves) / rows - 8) / 16 * 16;
}

static_assert(max_dims(227 * 1024, 4) == 1552, "an H100 block holds 227 KiB");
static_assert(max_dims(227 * 1024, 8) == 768);
static_assert(shared_bytes(1552, 4) + static_shared_bytes <= 227 * 1024);

/// half_bound.hpp's band in FP32, each constant rounded towards a wider band, so thresholds
/// computed from it with directed rounding are never narrower than the exact ones.
struct float_band {
  float quant_per_norm = 0;        ///< rounded up
  float quant_fixed = 0;           ///< up
  float arith_per_norm2 = 0;       ///< up
  float eps_up = 0, eps_down = 0;  ///< scaled eps, both ways
  float one_plus_rho = 1;          ///< up
  float one_minus_rho = 1;         ///< down
};

struct meta_view {
  const __half* query_half = nullptr;  ///< [nq x padded_dims(d)] by query position
  const __half* data_half = nullptr;   ///< [n x padded_dims(d)] by data position
  /// Per point: x = |x~|^2 (FP32 of the FP64 sum), y = |x| (unquantized, rounded up).
  const float2* query_norms = nullptr;
  const float2* data_norms = nullptr;
  float_band band;
  float eps2 = 0;  ///< scaled, the approximate decision's threshold
  bool approximate = false;
  /// Counting pass: [0] pairs inside the band (re-checked with the direct formula), [1] pairs
  /// only the approximate decision takes, [2] pairs only the exact decision takes.
  unsigned long long* tally = nullptr;
};

/// half_bound.hpp's thresholds_for in FP32 with directed rounding: lo rounded down, hi up.
__device__ __forceinline__ void lane_thresholds(const float_band& b, float norm_sum,
                                                float norm2_sum, float& lo, float& hi) {
  const float delta = __fmaf_ru(b.quant_per_norm, norm_sum, b.quant_fixed);
  const float arith = __fmul_ru(b.arith_per_norm2, norm2_sum);
  const float above = __fadd_ru(b.eps_up, delta);
  hi = __fmaf_ru(__fmul_ru(above, above), b.one_plus_rho, arith);
  const float below = __fsub_rd(b.eps_down, delta);
  lo = below > 0.0f ? __fsub_rd(__fmul_rd(__fmul_rd(below, below), b.one_minus_rho), arith) : -1.0f;
}

__device__ __forceinline__ std::uint32_t shared_word(const __half* at) {
  return *reinterpret_cast<const std::uint32_t*>(at);
}

/// `k_steps` (1 or 2) k steps of a warp's (8 RowBlocks) x 32 tile. `q` and `c` point at the
/// lane's first query row (group g) and candidate row, at the stage's first dimension plus 2 t.
template <int RowBlocks>
__device__ __forceinline__ void multiply_stage(float (&acc)[RowBlocks][4][2], const __half* q,
                                               unsigned q_stride, const __half* c,
                                               unsigned k_steps) {
#pragma unroll
  for (unsigned ks = 0; ks < 2; ++ks) {
    if (ks >= k_steps) break;
    std::uint32_t b[4][2];
#pragma unroll
    for (int cb = 0; cb < 4; ++cb) {
      const __half* col = c + cb * 8 * stage_stride + ks * 16;
      b[cb][0] = shared_word(col);
      b[cb][1] = shared_word(col + 8);
    }
#pragma unroll
    for (int mb = 0; mb < RowBlocks / 2; ++mb) {
      const __half* row = q + mb * 16 * q_stride + ks * 16;
      const std::uint32_t a[4] = {shared_word(row), shared_word(row + 8 * q_stride),
                                  shared_word(row + 8), shared_word(row + 8 * q_stride + 8)};
#pragma unroll
      for (int cb = 0; cb < 4; ++cb)
        tensor::hmma_m16n8k16(acc[2 * mb][cb], acc[2 * mb + 1][cb], a, b[cb]);
    }
  }
}

/// A lane's candidate columns of a tile (8 cb + acc_col + h on from position `first`; the columns
/// from `valid` on are padding): their squared norms, and the lane's thresholds from the largest
/// norms of its rows and its columns. A pair is surely out when |c~|^2 - 2 q~.c~ > hi - |q~|^2,
/// surely in when it is <= lo - |q~|^2.
template <int ColBlocks>
struct lane_columns {
  float norm2[ColBlocks][2];
  float lo, hi;
};

template <int ColBlocks>
__device__ __forceinline__ lane_columns<ColBlocks> load_lane_columns(
    const meta_view& m, std::uint32_t first, std::uint32_t valid, unsigned acc_col,
    float q_norm_most, float q_norm2_most) {
  lane_columns<ColBlocks> c;
  float norm_most = 0, norm2_most = 0;
#pragma unroll
  for (int cb = 0; cb < ColBlocks; ++cb)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const unsigned col = cb * 8 + acc_col + h;
      const float2 n = col < valid ? __ldg(m.data_norms + first + col) : float2{0.0f, 0.0f};
      c.norm2[cb][h] = n.x;
      norm2_most = fmaxf(norm2_most, n.x);
      norm_most = fmaxf(norm_most, n.y);
    }
  lane_thresholds(m.band, __fadd_ru(q_norm_most, norm_most), __fadd_ru(q_norm2_most, norm2_most),
                  c.lo, c.hi);
  return c;
}

/// The common case of the decisions, two instructions a pair: whether any pair of each of the
/// lane's row blocks may be in (|c~|^2 - 2 q~.c~ <= hi - |q~|^2, rounded up), and of any row
/// block. Only the row blocks with one are decided pair by pair.
template <int RowBlocks, int ColBlocks>
__device__ __forceinline__ bool rows_maybe_in(const float (&acc)[RowBlocks][ColBlocks][2],
                                              const float (&c_norm2)[ColBlocks][2],
                                              const float (&q_norm2)[RowBlocks], float hi,
                                              bool (&maybe)[RowBlocks]) {
  bool any = false;
#pragma unroll
  for (int rb = 0; rb < RowBlocks; ++rb) {
    const float out_above = __fsub_ru(hi, q_norm2[rb]);
    maybe[rb] = false;
#pragma unroll
    for (int cb = 0; cb < ColBlocks; ++cb)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        maybe[rb] |= fmaf(-2.0f, acc[rb][cb][h], c_norm2[cb][h]) <= out_above;
    any |= maybe[rb];
  }
  return any;
}

/// Halving: a self-join, candidates j > i. Otherwise every candidate (but the query itself in a
/// self-join). `n_data`: the candidates, positions [0, n_data).
template <class T, bool Halving, pass Pass, int RowBlocks>
__global__ void __launch_bounds__(threads, 2)
    meta_kernel(join_view<T> v, meta_view m, std::uint32_t n_data, query_span* span,
                row_output out) {
  constexpr unsigned block_rows = tile_queries(RowBlocks);
  extern __shared__ __align__(16) unsigned char shared_raw[];
  __shared__ std::uint32_t row_fill[max_tile_queries];   // fill, FULL: places taken in each row
  __shared__ std::uint32_t row_found[max_tile_queries];  // counting: hits in each row
  __shared__ std::uint32_t taken_tile;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned warp_row = (warp / warps_across) * RowBlocks * 8;
  const unsigned warp_col = (warp % warps_across) * 32;
  const unsigned frag_row = lane >> 2, acc_col = (lane & 3) * 2;
  const int d = v.d;
  const unsigned dp = fp16::padded_dims(d), qs = query_stride(d);
  __half* const query_tile = reinterpret_cast<__half*>(shared_raw);
  __half* const stage_base = query_tile + block_rows * qs;
  const unsigned chunks = (dp + stage_dims - 1) / stage_dims;
  const agents::tile_scheduler tiles(span, block_rows);
  auto reset_rows = [&]() {
    if (threadIdx.x < block_rows) row_fill[threadIdx.x] = row_found[threadIdx.x] = 0;
  };

  for (std::uint32_t q0, q_end; tiles.next(taken_tile, reset_rows, q0, q_end);) {
    const std::uint32_t c_begin = Halving ? q0 : 0;
    const std::uint32_t c_tiles = (n_data - c_begin + tile_candidates - 1) / tile_candidates;
    const std::uint32_t steps = c_tiles * chunks;

    // The query tile, zero rows past q_end: it rides in the first stage's copy group.
    const unsigned row_copies = dp / halves_per_copy;
    for (unsigned e = threadIdx.x; e < block_rows * row_copies; e += threads) {
      const unsigned r = e / row_copies, k = (e % row_copies) * halves_per_copy;
      const bool valid = q0 + r < q_end;
      const __half* from = m.query_half + (valid ? static_cast<std::size_t>(q0 + r) * dp + k : 0);
      agents::copy16_async(query_tile + r * qs + k, from, valid);
    }
    // Stages are loaded in order, (candidate tile, chunk) by (candidate tile, chunk): a cursor
    // instead of dividing the step count.
    std::uint32_t load_tile = 0, loaded = 0;
    unsigned load_chunk = 0;
    auto load_next_stage = [&]() {
      const std::uint32_t c0 = c_begin + load_tile * tile_candidates;
      const unsigned k0 = load_chunk * stage_dims;
      __half* to = stage_base + (loaded % stages) * tile_candidates * stage_stride;
      // Copies past dp would be skipped by the MMAs anyway (k_steps), so none is issued.
      const unsigned per_row = min(stage_dims, dp - k0) / halves_per_copy;
      for (unsigned e = threadIdx.x; e < tile_candidates * per_row; e += threads) {
        const unsigned r = e / per_row, k = (e % per_row) * halves_per_copy;
        const bool valid = c0 + r < n_data;
        const __half* from =
            m.data_half + (valid ? static_cast<std::size_t>(c0 + r) * dp + k0 + k : 0);
        agents::copy16_async(to + r * stage_stride + k, from, valid);
      }
      ++loaded;
      if (++load_chunk == chunks) {
        load_chunk = 0;
        ++load_tile;
      }
    };
    for (unsigned s = 0; s + 1 < stages; ++s) {
      if (s < steps) load_next_stage();
      agents::copy_commit();
    }

    float q_norm2[RowBlocks];
    float q_norm_most = 0, q_norm2_most = 0;  // the largest of the lane's rows
#pragma unroll
    for (int rb = 0; rb < RowBlocks; ++rb) {
      const std::uint32_t i = q0 + warp_row + rb * 8 + frag_row;
      const float2 n = i < q_end ? m.query_norms[i] : float2{0.0f, 0.0f};
      q_norm2[rb] = n.x;
      q_norm2_most = fmaxf(q_norm2_most, n.x);
      q_norm_most = fmaxf(q_norm_most, n.y);
    }

    for (std::uint32_t c_tile = 0, step = 0; c_tile < c_tiles; ++c_tile) {
      float acc[RowBlocks][4][2] = {};
      for (unsigned chunk = 0; chunk < chunks; ++chunk, ++step) {
        agents::copy_wait<stages - 2>();
        __syncthreads();  // stage `step` is in; the stage computed last round is free again
        if (loaded < steps) load_next_stage();
        agents::copy_commit();
        const __half* stage = stage_base + (step % stages) * tile_candidates * stage_stride;
        const unsigned k_steps = min(2u, (dp - chunk * stage_dims) / 16);
        multiply_stage<RowBlocks>(
            acc, query_tile + (warp_row + frag_row) * qs + chunk * stage_dims + acc_col, qs,
            stage + (warp_col + frag_row) * stage_stride + acc_col, k_steps);
      }

      // Epilogue: this lane's pairs of the finished tile.
      const std::uint32_t c0 = c_begin + c_tile * tile_candidates + warp_col;
      const auto columns = load_lane_columns<4>(m, c0, n_data > c0 ? n_data - c0 : 0, acc_col,
                                                q_norm_most, q_norm2_most);
      const auto& c_norm2 = columns.norm2;
      const float lo = columns.lo, hi = columns.hi;
      bool maybe[RowBlocks];
      const bool any = rows_maybe_in(acc, c_norm2, q_norm2, hi, maybe);
      std::uint64_t hits = 0;  // bit rb * 8 + 2 cb + h
      if (any) {
#pragma unroll
        for (int rb = 0; rb < RowBlocks; ++rb) {
          if (!maybe[rb]) continue;
          const float out_above = __fsub_ru(hi, q_norm2[rb]);
          const float in_below = __fsub_rd(lo, q_norm2[rb]);
          const std::uint32_t i = q0 + warp_row + rb * 8 + frag_row;
#pragma unroll
          for (int cb = 0; cb < 4; ++cb)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const float x = fmaf(-2.0f, acc[rb][cb][h], c_norm2[cb][h]);
              if (x > out_above) continue;
              const std::uint32_t j = c0 + cb * 8 + acc_col + h;
              if (!(j < n_data && i < q_end && (Halving ? j > i : !(v.self_join && j == i)))) {
                continue;
              }
              if (x <= in_below ||
                  fp16::recheck_pair<T, Pass == pass::count>(m, v, x + q_norm2[rb], i, j)) {
                hits |= std::uint64_t{1} << (rb * 8 + cb * 2 + h);
              }
            }
        }
      }
      if constexpr (Pass == pass::count) {
        if (hits != 0) {
#pragma unroll
          for (int rb = 0; rb < RowBlocks; ++rb) {
            const unsigned in_row = __popcll((hits >> (rb * 8)) & 0xffu);
            if (in_row != 0) atomicAdd(row_found + warp_row + rb * 8 + frag_row, in_row);
          }
          if (Halving) {
            for (std::uint64_t bits = hits; bits != 0; bits &= bits - 1) {
              const int bit = __ffsll(static_cast<long long>(bits)) - 1;
              atomicAdd(out.counts + c0 + ((bit & 7) >> 1) * 8 + acc_col + (bit & 1), 1u);
            }
          }
        }
        if (out.records != nullptr) {
          // record_hits takes four row blocks at a time.
#pragma unroll
          for (int half = 0; half < RowBlocks / 4; ++half) {
            agents::record_hits<Halving>(out, v.data_ids,
                                         static_cast<unsigned>(hits >> (32 * half)),
                                         q0 + warp_row + 32 * half + frag_row, c0, acc_col, lane);
          }
        }
      } else {
        agents::fill_tile_hits<Halving>(out, v.data_ids, hits, q0, warp_row, frag_row, c0, acc_col,
                                        row_fill);
      }
    }

    agents::copy_wait<0>();
    __syncthreads();  // every warp is done with this tile's shared memory and row counts
    if (Pass == pass::count && threadIdx.x < block_rows) {
      const std::uint32_t i = q0 + threadIdx.x;
      const std::uint32_t total = row_found[threadIdx.x];
      if (i < q_end && total != 0) atomicAdd(out.counts + i, total);
    }
  }
}

}  // namespace epsjoin::detail::meta16q
