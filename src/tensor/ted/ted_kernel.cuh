#pragma once
// ted-join's kernel (TED-Join, paper 002 / dissertation ch. 5): distances on the FP64 tensor
// cores with the expanded formula |q|^2 + |c|^2 - 2 q.c. A warp takes a work item (up to 32
// queries of one cell, four 8-row MMA blocks) and walks its candidate ranges 16 or 32 candidates
// (two or four 8-column blocks) at a time; each step of 4 dimensions is up to 8 or 16 m8n8k4 MMAs
// whose fragments load straight from the cell-ordered point copy (each lane one coordinate: 4 lanes
// read one point's 32 contiguous bytes), so no shared-memory staging is needed. Past each 16
// dimensions the tile is dropped when every pair's partial distance is surely past eps
// (short-circuit). Then each lane decides its 16 or 32 pairs: surely in, surely out, or, within the
// rounding band of error_bound.hpp, re-checked with the direct formula, so the result equals the
// oracle's.
//
// Fragment layout of m8n8k4 (PTX ISA): A (8x4, row) lane l holds A[l/4][l%4]; B (4x8, col)
// holds B[l%4][l/4]; the accumulator holds D[l/4][2(l%4)] and D[l/4][2(l%4)+1]. So a lane loads
// dimension k%4 of query row l/4 and of candidate column l/4, and owns the distances of query
// row l/4 to candidate columns 2(l%4) and 2(l%4)+1 of each block.

#include <cstdint>

#include "base/emit.cuh"
#include "gpu/agents/candidate_ranges.cuh"
#include "gpu/agents/kernel_contract.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/tile_writes.cuh"
#include "gpu/agents/work_fetch.cuh"

namespace epsjoin::detail::ted {

// The row pipeline's kernel contract (work items, views, passes, block shape) and the agents
// that write an MMA tile's hits.
using row_join::block_threads;
using row_join::full_mask;
using row_join::join_view;
using row_join::launch_config;
using row_join::pass;
using row_join::row_output;
using row_join::warps_per_block;
using row_join::work_item;
using agents::record_tile;
using agents::reserve_records;
using agents::row_lanes_sum;
using agents::write_row_group;

inline constexpr int dims_per_checkpoint = 16;

struct ted_view {
  const double* query_norms = nullptr;  ///< [nq x checkpoints] prefix squared norms by position
  const double* data_norms = nullptr;   ///< [n x checkpoints]
  int checkpoints = 1;                  ///< ceil(d / 16): entry c sums dimensions < 16 (c + 1)
  double per_norm = 0;                  ///< decision band (error_bound.hpp)
  double band_fixed = 0;
  bool approximate = false;  ///< decide by s' <= eps^2 alone (the papers' behaviour)
  bool short_circuit = true;
  int col_blocks = 2;        ///< host side: the kernel's ColBlocks (2 or 4)
  bool paired_loads = true;  ///< two coordinates a load where d is even (see the kernel)
  bool wide_mma = false;     ///< host side: the paired loads feed m16n8k8 (sm_90), not m8n8k4
  /// Counting pass: [0] pairs re-checked with the direct formula, [1] pairs only the
  /// approximate decision takes, [2] pairs only the exact decision takes.
  unsigned long long* tally = nullptr;
};

__device__ __forceinline__ void dmma_m8n8k4(double (&acc)[2], double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(acc[0]), "+d"(acc[1])
               : "d"(a), "d"(b));
#else
  __trap();  // the engine refuses devices older than sm_80 before launching
#endif
}

/// acc[2 mb .. 2 mb + 1][cb] += A (16 x K) B (K x 8) with the m16n8kK instruction. Its accumulator
/// layout (PTX ISA: rows g and g + 8, columns 2 t and 2 t + 1) is two m8n8k4 accumulators stacked,
/// so the epilogue reads every shape's acc[rb][cb][h] alike. A fragment v: row g + 8 (v % 2),
/// dimension t + 4 (v / 2); B fragment v: dimension t + 4 v, column g.
template <int K>
__device__ __forceinline__ void dmma_m16n8(double (&upper)[2], double (&lower)[2],
                                           const double (&a)[K / 2], const double (&b)[K / 4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (K == 4) {
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};\n"
        : "+d"(upper[0]), "+d"(upper[1]), "+d"(lower[0]), "+d"(lower[1])
        : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  } else if constexpr (K == 8) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(upper[0]), "+d"(upper[1]), "+d"(lower[0]), "+d"(lower[1])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(upper[0]), "+d"(upper[1]), "+d"(lower[0]), "+d"(lower[1])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
#else
  __trap();  // the engine takes the m16n8 shapes on sm_90 or newer only
#endif
}

/// Squared norms of every point, at each checkpoint (prefixes of 16 dimensions) and in full.
template <class T>
__global__ void prefix_norms_kernel(const T* points, std::uint32_t n, int d, int checkpoints,
                                    double* norms) {
  const std::uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  const T* x = points + static_cast<std::size_t>(p) * d;
  double sum = 0;
  for (int c = 0; c < checkpoints; ++c) {
    const int end = min(d, (c + 1) * dims_per_checkpoint);
    for (int k = c * dims_per_checkpoint; k < end; ++k) {
      const double v = static_cast<double>(x[k]);
      sum = fma(v, v, sum);
    }
    norms[static_cast<std::size_t>(p) * checkpoints + c] = sum;
  }
}

/// The rare part of decide_pair, out of line: inlined into each of a kernel's 32 pair decisions
/// it multiplied the code (and the registers) for pairs that almost never reach it.
template <class T, bool Tally>
__device__ __noinline__ bool recheck_pair(const ted_view& t, const join_view<T>& v, double s,
                                          double eps2, std::uint32_t pos, std::uint32_t j) {
  const bool exact = within(v.query_points + static_cast<std::size_t>(pos) * v.d,
                            v.data_points + static_cast<std::size_t>(j) * v.d, v.d, v.eps2);
  const bool hit = t.approximate ? s <= eps2 : exact;
  if constexpr (Tally) {
    atomicAdd(t.tally, 1ull);
    if (hit != exact) atomicAdd(t.tally + (hit ? 1 : 2), 1ull);
  }
  return hit;
}

/// One pair's decision from its dot product and squared norms: surely in, surely out, or (inside
/// the rounding band) re-checked with the direct formula; `Tally`: the counting pass counts the
/// re-checks and, when approximate, the pairs the two decisions take differently.
template <class T, bool Tally>
__device__ __forceinline__ bool decide_pair(const ted_view& t, const join_view<T>& v, double dot,
                                            double q_norm, double c_norm, double eps2,
                                            std::uint32_t pos, std::uint32_t j) {
  const double s = fmax(fma(-2.0, dot, q_norm + c_norm), 0.0);
  const double band = t.per_norm * (q_norm + c_norm) + t.band_fixed;
  if (s <= eps2 - band) return true;
  if (s > eps2 + band) return false;
  return recheck_pair<T, Tally>(t, v, s, eps2, pos, j);
}

/// Two consecutive coordinates (16-byte aligned for double, 8 for float) as doubles.
__device__ __forceinline__ double2 load_pair(const double* p) {
  return __ldg(reinterpret_cast<const double2*>(p));
}
__device__ __forceinline__ double2 load_pair(const float* p) {
  const float2 v = __ldg(reinterpret_cast<const float2*>(p));
  return {static_cast<double>(v.x), static_cast<double>(v.y)};
}

/// Short-circuit: whether every pair of the warp's tile is surely past eps^2 after the first
/// 16 (c + 1) dimensions (their partial distance, from the prefix norms at checkpoint c, minus
/// the band, which bounds a partial sum as it does the full one). Warp-uniform.
template <int ColBlocks>
__device__ __forceinline__ bool tile_surely_out(const ted_view& t,
                                                const double (&acc)[4][ColBlocks][2],
                                                const bool (&q_active)[4],
                                                const std::uint32_t (&q_pos)[4],
                                                unsigned row_blocks, std::uint32_t chunk,
                                                unsigned m, unsigned acc_col, int c, double eps2) {
  const int cp = t.checkpoints;
  bool all_out = true;
#pragma unroll
  for (int rb = 0; rb < 4; ++rb) {
    if (rb >= row_blocks || !q_active[rb]) continue;
    const double qn = t.query_norms[static_cast<std::size_t>(q_pos[rb]) * cp + c];
#pragma unroll
    for (int cb = 0; cb < ColBlocks; ++cb) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const unsigned col = cb * 8 + acc_col + h;
        if (col >= m) continue;
        const double cn = t.data_norms[static_cast<std::size_t>(chunk + col) * cp + c];
        const double s = fma(-2.0, acc[rb][cb][h], qn + cn);
        if (s - (t.per_norm * (qn + cn) + t.band_fixed) <= eps2) all_out = false;
      }
    }
  }
  return __all_sync(full_mask, all_out);
}

/// ColBlocks: candidates per tile step, in 8-column MMA blocks. 2 (a 32 x 16 tile) keeps the
/// accumulators and the decision of the pairs within 128 registers, so two blocks fit an SM; 4
/// (32 x 32) loads each query fragment for 4 MMAs instead of 2 but needs one block per SM, which
/// measured slower at every d tried (16 to 64).
/// Wide: the paired loads feed m16n8k8 (sm_90): row blocks 2 mb and 2 mb + 1 as the upper and
/// lower halves of one instruction, whose k slots t and t + 4 take the lane's dimensions 2 t and
/// 2 t + 1, so the loads are the same and a quarter of the MMA instructions remain.
template <class T, int ColBlocks, bool Halving, pass Pass, bool Wide = false>
__global__ void __launch_bounds__(block_threads, ColBlocks <= 2 ? 2 : 1)
    ted_kernel(join_view<T> v, ted_view t, const work_item* items, std::uint32_t n_items,
               unsigned* queue, row_output out) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned frag_row = lane >> 2;      // query row / candidate column this lane loads
  const unsigned frag_k = lane & 3;         // dimension (mod 4) this lane loads
  const unsigned acc_col = (lane & 3) * 2;  // first of this lane's two accumulator columns
  const std::uint32_t static_item = blockIdx.x * warps_per_block + (threadIdx.x >> 5);
  const int d = v.d;
  const int k_steps = (d + 3) / 4;
  const int cp = t.checkpoints;
  const double eps2 = static_cast<double>(v.eps2);
  constexpr unsigned tile_cols = ColBlocks * 8;
  constexpr int hits_per_row_block = ColBlocks * 2;
  static_assert(4 * hits_per_row_block <= 32, "a tile's hits fit one 32-bit mask");

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t i = agents::next_item(queue, static_item, first_round);
    if (i >= n_items) return;
    const work_item item = items[i];
    const unsigned row_blocks = (item.count + 7) / 8;

    bool q_active[4];
    std::uint32_t q_pos[4];
    double q_norm[4];
    std::uint32_t found[4];  // count: this lane's hits; fill (full): the row's length so far
    std::uint32_t q_id[4];   // halving fill: the caller's id of the query
    agents::item_row_blocks<Halving, Pass>(item, out, frag_row, q_active, q_pos, q_id);
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) {
      q_norm[rb] =
          q_active[rb] ? t.query_norms[static_cast<std::size_t>(q_pos[rb]) * cp + cp - 1] : 0.0;
      found[rb] = 0;
    }

    const std::uint32_t n_ranges = agents::candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const bool own_cell = Halving && r + 1 == n_ranges;
      const auto [b, e] = agents::candidate_range<T, Halving>(v, item.cell, r, item.first + 1);
      for (std::uint32_t chunk = b; chunk < e; chunk += tile_cols) {
        const unsigned m = min(tile_cols, e - chunk);
        const unsigned col_blocks = (m + 7) / 8;
        double acc[4][ColBlocks][2];
#pragma unroll
        for (int rb = 0; rb < 4; ++rb)
#pragma unroll
          for (int cb = 0; cb < ColBlocks; ++cb) acc[rb][cb][0] = acc[rb][cb][1] = 0.0;

        // Dimensions 8 at a time where rows are 16-byte aligned (d even): lane l loads
        // dimensions 2(l%4) and 2(l%4)+1 of the block with one vector load and feeds them to two
        // MMA steps, which sum dimensions {0,2,4,6} and {1,3,5,7} of the block instead of
        // {0..3} and {4..7}: the same products in another order, which the band allows for. Half
        // the load instructions of one scalar load per step; the rest of d goes 4 at a time.
        // (Chosen by the engine: faster at 8-16-D, slower from 64-D on.)
        const int vector_dims = t.paired_loads && d % 2 == 0 ? d - d % 8 : 0;
        bool dropped = false;
        for (int k0 = 0; k0 < vector_dims && !dropped; k0 += 8) {
          const int k = k0 + 2 * static_cast<int>(frag_k);
          double2 bf[ColBlocks];
#pragma unroll
          for (int cb = 0; cb < ColBlocks; ++cb) {
            const unsigned c = cb * 8 + frag_row;
            bf[cb] = c < m ? load_pair(v.data_points + static_cast<std::size_t>(chunk + c) * d + k)
                           : double2{0.0, 0.0};
          }
          auto query_pair = [&](unsigned rb) {
            return rb < row_blocks && q_active[rb]
                       ? load_pair(v.query_points + static_cast<std::size_t>(q_pos[rb]) * d + k)
                       : double2{0.0, 0.0};
          };
          if constexpr (Wide) {
#pragma unroll
            for (unsigned mb = 0; mb < 2; ++mb) {
              if (2 * mb >= row_blocks) break;
              const double2 upper = query_pair(2 * mb), lower = query_pair(2 * mb + 1);
              const double a[4] = {upper.x, lower.x, upper.y, lower.y};
#pragma unroll
              for (int cb = 0; cb < ColBlocks; ++cb) {
                const double b[2] = {bf[cb].x, bf[cb].y};
                if (cb < col_blocks) dmma_m16n8<8>(acc[2 * mb][cb], acc[2 * mb + 1][cb], a, b);
              }
            }
          } else {
#pragma unroll
            for (unsigned rb = 0; rb < 4; ++rb) {
              if (rb >= row_blocks) break;
              const double2 a = query_pair(rb);
#pragma unroll
              for (int cb = 0; cb < ColBlocks; ++cb) {
                if (cb < col_blocks) {
                  dmma_m8n8k4(acc[rb][cb], a.x, bf[cb].x);
                  dmma_m8n8k4(acc[rb][cb], a.y, bf[cb].y);
                }
              }
            }
          }
          if (t.short_circuit && (k0 + 8) % dims_per_checkpoint == 0 && k0 + 8 < d) {
            dropped = tile_surely_out<ColBlocks>(t, acc, q_active, q_pos, row_blocks, chunk, m,
                                                 acc_col, (k0 + 8) / dims_per_checkpoint - 1, eps2);
          }
        }
        for (int ks = vector_dims / 4; ks < k_steps && !dropped; ++ks) {
          const int k = ks * 4 + static_cast<int>(frag_k);
          double a[4], bf[ColBlocks];
#pragma unroll
          for (int rb = 0; rb < 4; ++rb) {
            a[rb] = rb < row_blocks && q_active[rb] && k < d
                        ? static_cast<double>(
                              v.query_points[static_cast<std::size_t>(q_pos[rb]) * d + k])
                        : 0.0;
          }
#pragma unroll
          for (int cb = 0; cb < ColBlocks; ++cb) {
            const unsigned c = cb * 8 + frag_row;
            bf[cb] = c < m && k < d
                         ? static_cast<double>(
                               v.data_points[static_cast<std::size_t>(chunk + c) * d + k])
                         : 0.0;
          }
#pragma unroll
          for (int rb = 0; rb < 4; ++rb) {
            if (rb >= row_blocks) break;
#pragma unroll
            for (int cb = 0; cb < ColBlocks; ++cb) {
              if (cb < col_blocks) dmma_m8n8k4(acc[rb][cb], a[rb], bf[cb]);
            }
          }
          // Short-circuit after each 16 dimensions but the last.
          if (t.short_circuit && (ks + 1) % (dims_per_checkpoint / 4) == 0 && ks + 1 < k_steps) {
            dropped =
                tile_surely_out<ColBlocks>(t, acc, q_active, q_pos, row_blocks, chunk, m, acc_col,
                                           (ks + 1) / (dims_per_checkpoint / 4) - 1, eps2);
          }
        }
        if (dropped) continue;

        // Decide this lane's pairs; its candidates' norms are the same for every row block.
        double c_norm[ColBlocks][2];
#pragma unroll
        for (int cb = 0; cb < ColBlocks; ++cb) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const unsigned col = cb * 8 + acc_col + h;
            c_norm[cb][h] =
                col < m ? __ldg(t.data_norms + static_cast<std::size_t>(chunk + col) * cp + cp - 1)
                        : 0.0;
          }
        }
        unsigned tile_hits = 0;  // count pass: bit rb * 4 + 2 cb + h
#pragma unroll
        for (int rb = 0; rb < 4; ++rb) {
          if (rb >= row_blocks) break;
          const std::uint32_t pos = q_pos[rb];
          unsigned hits = 0;  // bit 2 cb + h
#pragma unroll
          for (int cb = 0; cb < ColBlocks; ++cb) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const unsigned col = cb * 8 + acc_col + h;
              const std::uint32_t j = chunk + col;
              bool candidate = q_active[rb] && col < m;
              if (candidate) {
                if (own_cell)
                  candidate = j > pos;
                else if (!Halving && v.self_join)
                  candidate = j != pos;
              }
              const bool hit =
                  candidate && decide_pair<T, Pass == pass::count>(t, v, acc[rb][cb][h], q_norm[rb],
                                                                   c_norm[cb][h], eps2, pos, j);
              hits |= static_cast<unsigned>(hit) << (cb * 2 + h);
              if constexpr (Pass == pass::count) {
                if (Halving && hit) atomicAdd(out.counts + j, 1u);
              } else if constexpr (Halving) {
                if (hit) agents::write_both_rows(out, pos, j, v.data_ids[j], q_id[rb]);
              }
            }
          }
          if constexpr (Pass == pass::count) {
            found[rb] += __popc(hits);
            tile_hits |= hits << (rb * hits_per_row_block);
          } else if constexpr (!Halving) {
            write_row_group(out, v.data_ids, pos, hits, chunk, acc_col, lane, found[rb]);
          }
        }
        if constexpr (Pass == pass::count) {
          if (out.records != nullptr)
            record_tile<ColBlocks, Halving>(out, v.data_ids, tile_hits, q_pos, chunk, acc_col,
                                            lane);
        }
      }
    }
    if constexpr (Pass == pass::count) {
#pragma unroll
      for (int rb = 0; rb < 4; ++rb) {
        const std::uint32_t total = row_lanes_sum(found[rb]);
        if (q_active[rb] && (lane & 3) == 0) agents::store_count<Halving>(out, q_pos[rb], total);
      }
    }
  }
}

}  // namespace epsjoin::detail::ted
