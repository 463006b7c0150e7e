#pragma once
// ted-join's kernel for joins whose index prunes little (brute force, eps too wide for the grid,
// or a grid that leaves most pairs as candidates): it compares every query with every candidate,
// in position order, the cells ignored, so the join is a GEMM of the queries against the data and
// is tiled like one. A block owns 64 queries (all their dimensions held in shared memory for the
// whole sweep) and streams the candidates through a three-stage cp.async pipeline, 128
// candidates x 16 dimensions a stage; each of its 8 warps computes a 32 x 32 tile with MMAs whose
// fragments come from shared memory (m8n8k4: 16 MMAs for 8 fragment loads, against 8 MMAs for 6
// global loads in ted_kernel.cuh; sm_90's m16n8k4/k8/k16 do 2-8 times the work an instruction).
// The pair decisions (ted_kernel.cuh's decide_pair, so the output is exact) and the output run in
// the epilogue of each 64 x 128 tile. Blocks take query tiles from an atomic counter, in position
// order: under LID-UNICOMP (candidates j > i only) the first tiles are the heaviest.
//
// Shared-memory rows are padded to a stride of 4 mod 16 elements: the 8 rows x 4 dimensions a
// fragment load reads then fall in distinct banks (doubles: each half-warp's 4 rows cover the 32
// banks once; floats: the 8 rows do).

#include <cstdint>

#include "gpu/agents/async_copy.cuh"
#include "gpu/agents/tile_scheduler.cuh"
#include "gpu/agents/tile_writes.cuh"
#include "tensor/ted/ted_kernel.cuh"

namespace epsjoin::detail::ted::gemm {

inline constexpr unsigned tile_queries = 64;
inline constexpr unsigned tile_candidates = 128;
inline constexpr unsigned stage_dims = 16;
inline constexpr unsigned stages = 3;
inline constexpr unsigned warps_across = tile_candidates / 32;  // warp tiles are 32 x 32
inline constexpr unsigned threads = (tile_queries / 32) * warps_across * 32;
inline constexpr unsigned stage_stride = stage_dims + 4;

/// Elements between two queries' rows in shared memory: d rounded up to whole stages, padded.
__host__ __device__ constexpr unsigned query_stride(int d) {
  return (static_cast<unsigned>(d) + stage_dims - 1) / stage_dims * stage_dims + 4;
}

template <class T>
constexpr std::size_t shared_bytes(int d) {
  return sizeof(T) * (std::size_t{tile_queries} * query_stride(d) +
                      std::size_t{stages} * tile_candidates * stage_stride);
}

/// The largest d whose tiles fit `shared_limit` bytes.
template <class T>
constexpr std::size_t max_dims(std::size_t shared_limit) {
  const std::size_t stage_elements = std::size_t{stages} * tile_candidates * stage_stride;
  const std::size_t elements = shared_limit / sizeof(T);
  if (elements < stage_elements + tile_queries * (stage_dims + 4)) return 0;
  return ((elements - stage_elements) / tile_queries - 4) / stage_dims * stage_dims;
}

static_assert(max_dims<double>(227 * 1024) == 320, "an H100 block holds 227 KiB");

using agents::copy_async;
using agents::copy_commit;
using agents::copy_wait;
using agents::query_span;
using agents::record_hits;
using agents::row_lanes_sum;

/// The MMA instruction of the main loop. The m16n8 shapes (sm_90 on) do 2, 4 or 8 times the work
/// of one m8n8k4.
enum class mma_shape { m8n8k4, m16n8k4, m16n8k8, m16n8k16 };

constexpr int shape_k(mma_shape s) {
  return s == mma_shape::m16n8k4 ? 4 : s == mma_shape::m16n8k8 ? 8 : 16;
}

/// One stage (16 dimensions) of a warp's 32 x 32 tile. `q` and `c` point at the lane's first
/// query row (group g = lane / 4) and candidate row in shared memory, at the stage's first
/// dimension; t = lane % 4.
template <mma_shape Shape, class T>
__device__ __forceinline__ void multiply_stage(double (&acc)[4][4][2], const T* q,
                                               unsigned q_stride, const T* c, unsigned t) {
  if constexpr (Shape == mma_shape::m8n8k4) {
    // A fragment: row g, dimension t; B fragment: dimension t, column g.
#pragma unroll
    for (unsigned ks = 0; ks < stage_dims / 4; ++ks) {
      double a[4], b[4];
#pragma unroll
      for (int rb = 0; rb < 4; ++rb) a[rb] = static_cast<double>(q[rb * 8 * q_stride + ks * 4 + t]);
#pragma unroll
      for (int cb = 0; cb < 4; ++cb)
        b[cb] = static_cast<double>(c[cb * 8 * stage_stride + ks * 4 + t]);
#pragma unroll
      for (int rb = 0; rb < 4; ++rb)
#pragma unroll
        for (int cb = 0; cb < 4; ++cb) dmma_m8n8k4(acc[rb][cb], a[rb], b[cb]);
    }
  } else {
    constexpr int k = shape_k(Shape);
#pragma unroll
    for (unsigned ks = 0; ks < stage_dims / k; ++ks) {
      double b[4][k / 4];
#pragma unroll
      for (int cb = 0; cb < 4; ++cb)
#pragma unroll
        for (int v = 0; v < k / 4; ++v)
          b[cb][v] = static_cast<double>(c[cb * 8 * stage_stride + ks * k + t + 4 * v]);
#pragma unroll
      for (int mb = 0; mb < 2; ++mb) {
        double a[k / 2];
#pragma unroll
        for (int v = 0; v < k / 2; ++v)
          a[v] =
              static_cast<double>(q[(mb * 16 + (v % 2) * 8) * q_stride + ks * k + t + 4 * (v / 2)]);
#pragma unroll
        for (int cb = 0; cb < 4; ++cb)
          dmma_m16n8<k>(acc[2 * mb][cb], acc[2 * mb + 1][cb], a, b[cb]);
      }
    }
  }
}

/// Halving: a self-join of the one cell, candidates j > i. Otherwise every candidate (but the
/// query itself in a self-join). `n_data`: the candidates, positions [0, n_data).
template <class T, bool Halving, pass Pass, mma_shape Shape>
__global__ void __launch_bounds__(threads, 2)
    gemm_kernel(join_view<T> v, ted_view t, std::uint32_t n_data, query_span* span,
                row_output out) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  __shared__ std::uint32_t row_fill[tile_queries];  // fill, FULL: places taken in each row
  __shared__ std::uint32_t taken_tile;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned warp_row = (warp / warps_across) * 32, warp_col = (warp % warps_across) * 32;
  const unsigned frag_row = lane >> 2, frag_k = lane & 3, acc_col = (lane & 3) * 2;
  const int d = v.d;
  const unsigned qs = query_stride(d);
  T* const query_tile = reinterpret_cast<T*>(shared_raw);
  T* const stage_base = query_tile + tile_queries * qs;
  const unsigned chunks = (static_cast<unsigned>(d) + stage_dims - 1) / stage_dims;
  const int cp = t.checkpoints;
  const double eps2 = static_cast<double>(v.eps2);
  const agents::tile_scheduler tiles(span, tile_queries);
  auto reset_rows = [&]() {
    if (Pass == pass::fill && !Halving && threadIdx.x < tile_queries) row_fill[threadIdx.x] = 0;
  };

  for (std::uint32_t q0, q_end; tiles.next(taken_tile, reset_rows, q0, q_end);) {
    const std::uint32_t c_begin = Halving ? q0 : 0;
    const std::uint32_t c_tiles = (n_data - c_begin + tile_candidates - 1) / tile_candidates;
    const std::uint32_t steps = c_tiles * chunks;

    // The query tile, zero past d and past q_end: it rides in the first stage's copy group.
    for (unsigned e = threadIdx.x; e < tile_queries * (qs - 4); e += threads) {
      const unsigned r = e / (qs - 4), k = e % (qs - 4);
      const bool valid = q0 + r < q_end && k < static_cast<unsigned>(d);
      const T* from = v.query_points + (valid ? static_cast<std::size_t>(q0 + r) * d + k : 0);
      copy_async(query_tile + r * qs + k, from, valid);
    }
    auto load_stage = [&](std::uint32_t step) {
      const std::uint32_t c0 = c_begin + (step / chunks) * tile_candidates;
      const unsigned k0 = (step % chunks) * stage_dims;
      T* to = stage_base + (step % stages) * tile_candidates * stage_stride;
      for (unsigned e = threadIdx.x; e < tile_candidates * stage_dims; e += threads) {
        const unsigned r = e / stage_dims, k = k0 + e % stage_dims;
        const bool valid = c0 + r < n_data && k < static_cast<unsigned>(d);
        const T* from = v.data_points + (valid ? static_cast<std::size_t>(c0 + r) * d + k : 0);
        copy_async(to + r * stage_stride + e % stage_dims, from, valid);
      }
    };
    for (unsigned s = 0; s + 1 < stages; ++s) {
      if (s < steps) load_stage(s);
      copy_commit();
    }

    double q_norm[4];
    std::uint32_t found[4];  // counting pass: this lane's hits in each row block
#pragma unroll
    for (int rb = 0; rb < 4; ++rb) {
      const std::uint32_t i = q0 + warp_row + rb * 8 + frag_row;
      q_norm[rb] = i < q_end ? t.query_norms[static_cast<std::size_t>(i) * cp + cp - 1] : 0.0;
      found[rb] = 0;
    }
    // One candidate tile after the other, its stages in the inner loop, the accumulators zeroed
    // at the top of each tile. (With one flat loop over the steps and the accumulators zeroed
    // when a tile's first stage came round, nvcc 13.0 made the filling kernels' m16n8k8 MMAs
    // predicated "accumulate or start from zero" instructions (SASS: DMMA ... UP0), and those
    // kernels found pairs the counting kernels, compiled without them, did not: rows overflowed.
    // This form compiles to plain MMAs in every kernel; device runs 9-10 of this session.)
    for (std::uint32_t c_tile = 0, step = 0; c_tile < c_tiles; ++c_tile) {
      double acc[4][4][2] = {};
      for (unsigned chunk = 0; chunk < chunks; ++chunk, ++step) {
        copy_wait<stages - 2>();
        __syncthreads();  // stage `step` is in; the stage computed last round is free again
        if (step + stages - 1 < steps) load_stage(step + stages - 1);
        copy_commit();
        const T* stage = stage_base + (step % stages) * tile_candidates * stage_stride;
        multiply_stage<Shape>(acc, query_tile + (warp_row + frag_row) * qs + chunk * stage_dims, qs,
                              stage + (warp_col + frag_row) * stage_stride, frag_k);
      }

      // Epilogue: decide this lane's 32 pairs of the finished 64 x 128 tile.
      const std::uint32_t c0 = c_begin + c_tile * tile_candidates + warp_col;
      unsigned hits = 0;  // bit rb * 8 + 2 cb + h
#pragma unroll
      for (int cb = 0; cb < 4; ++cb)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const std::uint32_t j = c0 + cb * 8 + acc_col + h;
          if (j >= n_data) continue;
          const double c_norm = __ldg(t.data_norms + static_cast<std::size_t>(j) * cp + cp - 1);
#pragma unroll
          for (int rb = 0; rb < 4; ++rb) {
            const std::uint32_t i = q0 + warp_row + rb * 8 + frag_row;
            const bool candidate = i < q_end && (Halving ? j > i : !(v.self_join && j == i));
            if (candidate && decide_pair<T, Pass == pass::count>(t, v, acc[rb][cb][h], q_norm[rb],
                                                                 c_norm, eps2, i, j)) {
              hits |= 1u << (rb * 8 + cb * 2 + h);
            }
          }
        }
      if constexpr (Pass == pass::count) {
#pragma unroll
        for (int rb = 0; rb < 4; ++rb) found[rb] += __popc((hits >> (rb * 8)) & 0xffu);
        if (Halving) {
          for (unsigned bits = hits; bits != 0; bits &= bits - 1) {
            const int bit = __ffs(bits) - 1;
            atomicAdd(out.counts + c0 + ((bit & 7) >> 1) * 8 + acc_col + (bit & 1), 1u);
          }
        }
        if (out.records != nullptr) {
          record_hits<Halving>(out, v.data_ids, hits, q0 + warp_row + frag_row, c0, acc_col, lane);
        }
      } else {
        agents::fill_tile_hits<Halving>(out, v.data_ids, hits, q0, warp_row, frag_row, c0, acc_col,
                                        row_fill);
      }
    }

    if constexpr (Pass == pass::count) {
      // The four lanes of a row, then the four warps across the tile, add up.
#pragma unroll
      for (int rb = 0; rb < 4; ++rb) {
        const std::uint32_t total = row_lanes_sum(found[rb]);
        const std::uint32_t i = q0 + warp_row + rb * 8 + frag_row;
        if ((lane & 3) == 0 && i < q_end && total != 0) atomicAdd(out.counts + i, total);
      }
    }
    copy_wait<0>();
    __syncthreads();  // every warp is done with this tile's shared memory
  }
}

}  // namespace epsjoin::detail::ted::gemm
