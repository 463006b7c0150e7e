#pragma once
// The brute-force join of two leaves: each query row against the candidate leaf's columns, a
// vector of candidates at a time, hits taken from the compare mask without a branch per
// candidate. Compiled twice: 16-byte vectors for any x86-64, 32-byte ones for CPUs with AVX2.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "base/float_band.hpp"
#include "cpu/super_ego/ego_prune.hpp"
#include "cpu/super_ego/ego_simd.hpp"
#include "cpu/super_ego/sorted_points.hpp"
#include "epsjoin/dataset.hpp"

// Vector-returning helpers below are always inlined (see base/cpu_isa.hpp): no call crosses an ABI.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace epsjoin::detail::ego {

/// The caller's points, for the float64 re-check of the band (base/float_band.hpp): a
/// candidate whose sum s has eps2 < s <= band_hi is decided as the oracle decides it.
struct exact_check {
  dataset_view queries, data;  ///< A and B as the caller gave them; sorted_points::ids index them
  double eps2;                 ///< eps^2 in float64
};

/// One leaf pair: A positions [a0, a1) against B positions [b0, b1).
template <class T>
struct leaf_scope {
  const sorted_points<T>* a;   ///< queries, read by rows
  const T* const* columns;     ///< [d] B's columns, each padded by simd_pad
  std::size_t column_stride;   ///< columns[k] == columns[0] + k * column_stride
  const std::uint32_t* b_ids;  ///< [B's n] the caller's id of each B position
  std::size_t a0, a1, b0, b1;
  bool self_join;              ///< only j > i
  T eps2;                      ///< s <= eps2: a hit
  T band_hi;                   ///< eps2 < s <= band_hi: re-checked through `exact`
  const exact_check* exact;    ///< null: no band (s <= eps2 is final)
  std::uint64_t* rechecks;     ///< += the candidates re-checked
  const T* lower_b;            ///< B leaf's bounding box, for the per-query test
  const T* upper_b;
  bool box;                    ///< run the per-query box test
  double box_limit;
};

/// One query against candidate columns, a vector of candidates at a time. Locals, not
/// pointers into the scope: stores through memcpy may alias anything, so members would reload.
/// D > 0: D dimensions, all summed (in 1-8 dimensions an early exit costs more branches than
/// it saves). D == 0: any d, in blocks of 8 dimensions, and the vector is abandoned after a
/// block once every lane is above `limit`; dimensions are reordered most selective first, so
/// the early blocks are the likeliest to pass it. Terms are non-negative and IEEE addition is
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
  vec limit;  ///< the largest sum that may still be a hit (eps2, or the band's top)
  vec lo;     ///< eps2: a sum at most this is a hit

  EPSJOIN_ISA_INLINE void load_query(const T* row) {
    if constexpr (D > 0) {
      for (int k = 0; k < D; ++k) q[k] = S::splat(row[k]);
    } else {
      query = row;
    }
  }

  /// The squared distances of candidates j .. j + width - 1 to the query; D == 0 may stop once
  /// every lane is above `limit` (then each returned lane is a partial sum above it).
  EPSJOIN_ISA_INLINE vec distances(std::size_t j) const {
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
        if (!any(static_cast<mask>(acc <= limit))) return acc;
      }
      for (; k < d; ++k) {
        const vec t = S::load(c + k * stride) - S::splat(query[k]);
        acc += t * t;
      }
    }
    return acc;
  }

  /// -1 in the `valid` lanes of candidates j .. j + width - 1 within eps2 of the query; the
  /// valid lanes whose sum lies above eps2 but not above `limit` (the band) are added to
  /// `band`.
  EPSJOIN_ISA_INLINE mask hits(std::size_t j, mask valid, mask& band) const {
    const vec acc = distances(j);
    const mask h = static_cast<mask>(acc <= lo) & valid;
    band |= static_cast<mask>(acc <= limit) & valid & ~h;
    return h;
  }

  EPSJOIN_ISA_INLINE static bool any(mask m) {
    typename S::lane_int bits = 0;
    for (int l = 0; l < S::width; ++l) bits |= m[l];
    return bits != 0;
  }
};

/// The band, for the rare row with candidates in it: the row's sums again (the same vector
/// code, so the same sums), and each candidate with eps2 < s <= band_hi decided in float64 from
/// the caller's points, as the oracle decides it. Writes the B positions of the confirmed
/// candidates to `out` in order and returns how many.
template <class T, int D, int Bytes>
EPSJOIN_ISA_INLINE std::size_t confirm_band(const leaf_scope<T>& s,
                                            const row_kernel<T, D, Bytes>& kernel, std::size_t i,
                                            std::size_t j0, std::size_t full,
                                            typename simd<T, Bytes>::mask tail,
                                            std::uint32_t* out) {
  using S = simd<T, Bytes>;
  using mask = typename S::mask;
  constexpr std::size_t w = S::width;
  const mask all = S::first_lanes(w);
  const std::uint32_t query_id = s.a->ids[i];
  std::size_t n = 0;
  for (std::size_t j = j0; j < s.b1; j += w) {
    mask band{};
    kernel.hits(j, j < full ? all : tail, band);
    if (!kernel.any(band)) continue;
    for (std::size_t lane = 0; lane < w; ++lane) {
      if (band[lane] == 0) continue;
      ++*s.rechecks;
      const auto position = static_cast<std::uint32_t>(j + lane);
      if (cpu::exact_within(s.exact->queries, query_id, s.exact->data, s.b_ids[position],
                            s.exact->eps2)) {
        out[n++] = position;
      }
    }
  }
  return n;
}

/// Joins the leaf pair, handing hits to `out` (see ego_joiner); returns distances computed.
/// `match` has room for b1 - b0 positions.
template <class T, int D, int Bytes, class Out>
EPSJOIN_ISA_INLINE std::uint64_t leaf_rows(const leaf_scope<T>& s, Out& out,
                                           std::uint32_t* match) {
  using S = simd<T, Bytes>;
  using mask = typename S::mask;
  constexpr std::size_t w = S::width;
  // The band (float32's rounding, float64's order of summing) is decided as the oracle decides.
  const bool banded = s.exact != nullptr;
  row_kernel<T, D, Bytes> kernel;
  if constexpr (D > 0) {
    for (int k = 0; k < D; ++k) kernel.col[k] = s.columns[k];
  } else {
    kernel.base = s.columns[0];
    kernel.stride = s.column_stride;
    kernel.d = s.a->d;
  }
  kernel.lo = S::splat(s.eps2);
  kernel.limit = S::splat(banded ? s.band_hi : s.eps2);
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
    // Lanes in float32's band anywhere in the row: rare, so decided after the row, not in it.
    mask band{};
    if constexpr (Out::counts) {
      mask total{};
      lane_count<T>* cc = out.columns();
      if (s.self_join) {
        // Per-candidate counts for the reverse direction, lanes as wide as T.
        for (std::size_t j = j0; j < s.b1; j += w) {
          const mask h = kernel.hits(j, j < full ? all : tail, band);
          S::store(cc + (j - s.b0), S::load(cc + (j - s.b0)) - h);
          total -= h;
        }
      } else {
        for (std::size_t j = j0; j < s.b1; j += w) {
          total -= kernel.hits(j, j < full ? all : tail, band);
        }
      }
      auto found = static_cast<std::size_t>(S::sum(total));
      if (banded && kernel.any(band)) {
        const std::size_t n = confirm_band(s, kernel, i, j0, full, tail, match);
        if (s.self_join) {
          for (std::size_t k = 0; k < n; ++k) cc[match[k] - s.b0] += 1;
        }
        found += n;
      }
      out.add_row(i, found);
    } else {
      std::size_t m = 0;
      for (std::size_t j = j0; j < s.b1; j += w) {
        const mask h = kernel.hits(j, j < full ? all : tail, band);
        for (std::size_t lane = 0; lane < w; ++lane) {
          match[m] = static_cast<std::uint32_t>(j + lane);
          m += static_cast<std::size_t>(h[lane] & 1);
        }
      }
      if (banded && kernel.any(band)) m += confirm_band(s, kernel, i, j0, full, tail, match + m);
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
