#pragma once
// The brute-force join of two leaves: each query row against the candidate leaf's columns, a
// vector of candidates at a time, hits taken from the compare mask without a branch per
// candidate. Compiled twice: 16-byte vectors for any x86-64, 32-byte ones for CPUs with AVX2.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cpu/super_ego/ego_prune.hpp"
#include "cpu/super_ego/ego_simd.hpp"
#include "cpu/super_ego/sorted_points.hpp"

// Vector-returning helpers below are always inlined (see core/cpu_isa.hpp): no call crosses an ABI.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace epsjoin::detail::ego {

/// One leaf pair: A positions [a0, a1) against B positions [b0, b1).
template <class T>
struct leaf_scope {
  const sorted_points<T>* a;   ///< queries, read by rows
  const T* const* columns;     ///< [d] B's columns, each padded by simd_pad
  std::size_t column_stride;   ///< columns[k] == columns[0] + k * column_stride
  std::size_t a0, a1, b0, b1;
  bool self_join;              ///< only j > i
  T eps2;
  const T* lower_b;            ///< B leaf's bounding box, for the per-query test
  const T* upper_b;
  bool box;                    ///< run the per-query box test
  double box_limit;
};

/// One query against candidate columns, a vector of candidates at a time. Locals, not
/// pointers into the scope: stores through memcpy may alias anything, so members would reload.
/// D > 0: D dimensions, all summed (in 1-8 dimensions an early exit costs more branches than
/// it saves). D == 0: any d, in blocks of 8 dimensions, and the vector is abandoned after a
/// block once every lane is above eps2; dimensions are reordered most selective first, so the
/// early blocks are the likeliest to pass eps2. Terms are non-negative and IEEE addition is
/// monotone, so abandoning never changes an answer.
template <class T, int D, int Bytes>
struct row_kernel {
  using S = simd<T, Bytes>;
  using vec = typename S::vec;
  using mask = typename S::mask;
  static constexpr std::size_t block = 8;
  const T* col[D > 0 ? D : 1];  // D > 0: each dimension's column
  vec q[D > 0 ? D : 1];
  const T* base = nullptr;      // D == 0: column k at base + k * stride
  std::size_t stride = 0;
  std::size_t d = 0;
  const T* query = nullptr;
  vec eps2;

  EPSJOIN_ISA_INLINE void load_query(const T* row) {
    if constexpr (D > 0) {
      for (int k = 0; k < D; ++k) q[k] = S::splat(row[k]);
    } else {
      query = row;
    }
  }

  /// -1 in the lanes of candidates j .. j + width - 1 within eps of the query.
  EPSJOIN_ISA_INLINE mask hits(std::size_t j) const {
    vec acc{};
    if constexpr (D > 0) {
      for (int k = 0; k < D; ++k) {
        const vec t = S::load(col[k] + j) - q[k];
        acc += t * t;
      }
    } else {
      const T* c = base + j;
      std::size_t k = 0;
      for (; k + block <= d; k += block) {
        for (std::size_t u = 0; u < block; ++u) {
          const vec t = S::load(c + (k + u) * stride) - S::splat(query[k + u]);
          acc += t * t;
        }
        if (!any(static_cast<mask>(acc <= eps2))) return mask{};
      }
      for (; k < d; ++k) {
        const vec t = S::load(c + k * stride) - S::splat(query[k]);
        acc += t * t;
      }
    }
    return static_cast<mask>(acc <= eps2);
  }

  EPSJOIN_ISA_INLINE static bool any(mask m) {
    typename S::lane_int bits = 0;
    for (int l = 0; l < S::width; ++l) bits |= m[l];
    return bits != 0;
  }
};

/// Joins the leaf pair, handing hits to `out` (see ego_joiner); returns distances computed.
template <class T, int D, int Bytes, class Out>
EPSJOIN_ISA_INLINE std::uint64_t leaf_rows(const leaf_scope<T>& s, Out& out,
                                           std::uint32_t* match) {
  using S = simd<T, Bytes>;
  using mask = typename S::mask;
  constexpr std::size_t w = S::width;
  row_kernel<T, D, Bytes> kernel;
  if constexpr (D > 0) {
    for (int k = 0; k < D; ++k) kernel.col[k] = s.columns[k];
  } else {
    kernel.base = s.columns[0];
    kernel.stride = s.column_stride;
    kernel.d = s.a->d;
  }
  kernel.eps2 = S::splat(s.eps2);
  const mask all = S::first_lanes(w);
  std::uint64_t candidates = 0;
  out.begin_leaf(s.b0, s.b1);
  for (std::size_t i = s.a0; i < s.a1; ++i) {
    const std::size_t j0 = s.self_join ? std::max(s.b0, i + 1) : s.b0;
    if (j0 >= s.b1) break;  // in a self-join j0 only grows with i
    const T* q = s.a->row(i);
    if (s.box && box_distance2(q, q, s.lower_b, s.upper_b, s.a->d, s.box_limit) > s.box_limit) {
      continue;  // the query is farther than eps from the whole leaf
    }
    kernel.load_query(q);
    const std::size_t full = j0 + (s.b1 - j0) / w * w;
    const mask tail = S::first_lanes(s.b1 - full);
    if constexpr (Out::counts) {
      mask total{};
      if (s.self_join) {
        // Per-candidate counts for the reverse direction, lanes as wide as T.
        lane_count<T>* cc = out.columns();
        for (std::size_t j = j0; j < s.b1; j += w) {
          const mask h = kernel.hits(j) & (j < full ? all : tail);
          S::store(cc + (j - s.b0), S::load(cc + (j - s.b0)) - h);
          total -= h;
        }
      } else {
        for (std::size_t j = j0; j < s.b1; j += w) total -= kernel.hits(j) & (j < full ? all : tail);
      }
      out.add_row(i, static_cast<std::size_t>(S::sum(total)));
    } else {
      std::size_t m = 0;
      for (std::size_t j = j0; j < s.b1; j += w) {
        const mask h = kernel.hits(j) & (j < full ? all : tail);
        for (std::size_t lane = 0; lane < w; ++lane) {
          match[m] = static_cast<std::uint32_t>(j + lane);
          m += static_cast<std::size_t>(h[lane] & 1);
        }
      }
      if (m > 0) out.row(i, match, m);
    }
    candidates += s.b1 - j0;
  }
  out.end_leaf();
  return candidates;
}

template <class T, int D, class Out>
std::uint64_t leaf_rows_16(const leaf_scope<T>& s, Out& out, std::uint32_t* match) {
  return leaf_rows<T, D, 16, Out>(s, out, match);
}

#if EPSJOIN_ISA_HAS_V3
template <class T, int D, class Out>
EPSJOIN_ISA_V3 std::uint64_t leaf_rows_32(const leaf_scope<T>& s, Out& out,
                                            std::uint32_t* match) {
  return leaf_rows<T, D, 32, Out>(s, out, match);
}
#endif

}  // namespace epsjoin::detail::ego

#pragma GCC diagnostic pop
