#pragma once
// cpu-grid's distance loops. A point set exposes the squared distance from a loaded query to a
// candidate position; the executor runs it over blocks of up to block_len consecutive candidates.
//
// column_set<T, D>: D <= 8 dimensions known at compile time, columns contiguous and padded: the
//   block loops use explicit SIMD vectors (GCC/Clang vector extensions, 16 bytes with the
//   x86-64 baseline, 32 with AVX) over candidates, the last vector masked, so there is no scalar
//   tail and no branch per candidate; all D terms are always summed, no early exit to mispredict.
// row_set<T, Every>: any d, rows contiguous: a scalar loop over dimensions that stops once the
//   partial sum passes `hi`, checked every `Every` dimensions (0: never). Terms are >= 0, so a
//   partial sum past hi stays past it: the exit is exact, not a heuristic.
//
// Squared distances are never NaN: coordinates are finite (float32 copies of values beyond
// float range are refused before), and a sum of non-negative terms cannot form inf - inf.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/cpu_isa.hpp"
#include "base/within_eps.hpp"

// 32-byte vectors in code compiled for the x86-64 baseline draw GCC's note that passing them by
// value would change the ABI. Every function here taking or returning one is always_inline, so no
// such call exists; the note is silenced for the files that include this header (the engine's).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace epsjoin::detail::cpu::kernels {

/// Candidates per block.
inline constexpr unsigned block_len = 64;

// Vector width: the task loop is instantiated for 16-byte vectors, and for 32-byte ones in a
// function compiled for x86-64-v3 that `flatten` fills with inlined kernels (base/cpu_isa.hpp);
// the engine calls it only where isa::cpu_has_v3().
using isa::simd;

/// Columns are padded (point_block::column_pad) and so are the per-candidate counters
/// (counter_pad), so the masked last vector of a block may read past the block's end.
inline constexpr std::size_t counter_pad = 16;

/// Per-candidate counters: integers of the lane width of T, so compare masks add into them.
template <class T>
using lane_count = isa::lane_int<T>;

// M: the norm (euclidean, manhattan or chebyshev). A set's "distance" is accumulate<M>'s value:
// the squared distance for euclidean, compared with norm_limit<M>(eps).
template <class T, int D, distance_metric M = distance_metric::euclidean>
struct column_set {
  static constexpr distance_metric metric = M;
  const T* col[D];  // each followed by padding (point_block::column_pad)

  struct query {
    T v[D];
  };
  query load(std::size_t p) const {
    query q;
    for (int j = 0; j < D; ++j) q.v[j] = col[j][p];
    return q;
  }
  T distance(const query& q, std::size_t c, T /*hi*/) const {
    T acc = 0;
    for (int j = 0; j < D; ++j) acc = accumulate<M>(acc, col[j][c], q.v[j]);
    return acc;
  }
  /// The Euclidean distance a result reports (reported_distance), summed in the input's
  /// dimension order: input dimension k is column column_of_dim[k].
  double reported(const query& q, std::size_t c, const int* column_of_dim) const {
    return std::sqrt(reported_square(q, c, column_of_dim));
  }
  double reported_square(const query& q, std::size_t c, const int* column_of_dim) const {
    return detail::reported_square(D, [&](std::size_t k) {
      const int j = column_of_dim[k];
      return static_cast<double>(q.v[j]) - static_cast<double>(col[j][c]);
    });
  }
};

/// One dimension's term of norm M on SIMD vectors, as accumulate<M> does it per lane.
template <distance_metric M, class V>
EPSJOIN_ISA_INLINE V accumulate_lanes(V acc, V diff) {
  if constexpr (M == distance_metric::euclidean) {
    return acc + diff * diff;
  } else {
    const V magnitude = diff < 0 ? -diff : diff;
    if constexpr (M == distance_metric::manhattan) {
      return acc + magnitude;
    } else {
      return acc > magnitude ? acc : magnitude;
    }
  }
}

/// The lanes of v combined as norm M combines dimensions (a sum, or the maximum).
template <distance_metric M, class S>
EPSJOIN_ISA_INLINE auto combine_lanes(typename S::vec v) {
  if constexpr (M == distance_metric::chebyshev) {
    auto most = v[0];
    for (int i = 1; i < S::width; ++i) most = most > v[i] ? most : v[i];
    return most;
  } else {
    return S::sum(v);
  }
}

/// The columns of a block and the broadcast query, in locals: stores through memcpy may alias
/// anything, so members would be reloaded at every step.
template <class T, int D, int Bytes, distance_metric M = distance_metric::euclidean>
struct column_block {
  using S = simd<T, Bytes>;
  const T* c[D];
  typename S::vec q[D];
  EPSJOIN_ISA_INLINE column_block(const column_set<T, D, M>& set, const typename column_set<T, D, M>::query& qp,
               std::size_t c0) {
    for (int j = 0; j < D; ++j) {
      c[j] = set.col[j] + c0;
      q[j] = S::splat(qp.v[j]);
    }
  }
  EPSJOIN_ISA_INLINE typename S::vec distances(unsigned i) const {
    typename S::vec acc{};
    for (int j = 0; j < D; ++j) {
      acc = accumulate_lanes<M>(acc, S::load(c[j] + i) - q[j]);
    }
    return acc;
  }
};

template <class T, int Every, distance_metric M = distance_metric::euclidean>
struct row_set {
  static constexpr distance_metric metric = M;
  const T* rows;
  std::size_t d;

  struct query {
    const T* row;
  };
  query load(std::size_t p) const { return {rows + p * d}; }
  /// As column_set::reported.
  double reported(const query& q, std::size_t c, const int* column_of_dim) const {
    return std::sqrt(reported_square(q, c, column_of_dim));
  }
  double reported_square(const query& q, std::size_t c, const int* column_of_dim) const {
    const T* b = rows + c * d;
    return detail::reported_square(d, [&](std::size_t k) {
      const int j = column_of_dim[k];
      return static_cast<double>(q.row[j]) - static_cast<double>(b[j]);
    });
  }
  /// Scalar, in column order (the float64 re-checks and tests use it).
  T distance(const query& q, std::size_t c, T hi) const {
    if constexpr (M == distance_metric::euclidean) {
      return squared_distance<rounding::plain, 0, Every>(q.row, rows + c * d, d, hi);
    } else {
      const T* b = rows + c * d;
      T acc = 0;
      std::size_t k = 0;
      if constexpr (Every > 0) {
        for (; k + Every <= d; k += Every) {
          for (int t = 0; t < Every; ++t) acc = accumulate<M>(acc, q.row[k + t], b[k + t]);
          if (acc > hi) return acc;
        }
      }
      for (; k < d; ++k) acc = accumulate<M>(acc, q.row[k], b[k]);
      return acc;
    }
  }
  /// SIMD over dimensions: one vector of partial sums, its lanes added up only where the early
  /// exit looks (every `Every` dimensions, rounded up to whole vectors) and at the end. The sum
  /// order differs from the scalar one by rounding only (far inside the 1e-12 band).
  template <int Bytes>
  EPSJOIN_ISA_INLINE T distance_simd(const query& q, std::size_t c, T hi) const {
    using S = simd<T, Bytes>;
    constexpr int w = S::width;
    constexpr int vectors_per_check = Every <= 0 ? 0 : (Every + w - 1) / w;
    const T* __restrict a = q.row;
    const T* __restrict b = rows + c * d;
    typename S::vec acc{};
    std::size_t j = 0;
    int since_check = 0;
    for (; j + w <= d; j += w) {
      acc = accumulate_lanes<M>(acc, S::load(a + j) - S::load(b + j));
      if constexpr (vectors_per_check > 0) {
        if (++since_check == vectors_per_check) {
          since_check = 0;
          if (combine_lanes<M, S>(acc) > hi) return combine_lanes<M, S>(acc);
        }
      }
    }
    T total = combine_lanes<M, S>(acc);
    for (; j < d; ++j) total = accumulate<M>(total, a[j], b[j]);
    return total;
  }
};

/// Squared distances of block [c0, c0 + len) into s (room for block_len + a vector).
template <int Bytes, class T, int D, distance_metric M>
inline void block_distances(const column_set<T, D, M>& set, const typename column_set<T, D, M>::query& q,
                            std::size_t c0, unsigned len, T /*hi*/, T* s) {
  using S = simd<T, Bytes>;
  const column_block<T, D, Bytes, M> b(set, q, c0);
  for (unsigned i = 0; i < len; i += S::width) S::store(s + i, b.distances(i));
  static_assert(S::width <= static_cast<int>(counter_pad));
}

template <int Bytes, class T, int Every, distance_metric M>
inline void block_distances(const row_set<T, Every, M>& set, const typename row_set<T, Every, M>::query& q,
                            std::size_t c0, unsigned len, T hi, T* s) {
  for (unsigned i = 0; i < len; ++i) s[i] = set.template distance_simd<Bytes>(q, c0 + i, hi);
}

/// Bit i set for the block's candidates i < len whose squared distance s[i] <= limit (s holds
/// whole vectors: the lanes past len are cleared here).
template <int Bytes, class T>
EPSJOIN_ISA_INLINE std::uint64_t bits_at_most(const T* s, unsigned len, T limit) {
  using S = simd<T, Bytes>;
  static_assert(block_len <= 64 && block_len % S::width == 0);
  const typename S::vec l = S::splat(limit);
  std::uint64_t bits = 0;
  for (unsigned i = 0; i < len; i += S::width) {
    bits |= static_cast<std::uint64_t>(isa::lane_bits(S::load(s + i) <= l)) << i;
  }
  return len >= 64 ? bits : bits & ((std::uint64_t{1} << len) - 1);
}

/// Writes the block indices i with s[i] <= hi to `out` without a branch per candidate; returns
/// how many.
template <class T>
inline unsigned select_candidates(const T* s, unsigned len, T hi, std::uint8_t* out) {
  unsigned n = 0;
  for (unsigned i = 0; i < len; ++i) {
    out[n] = static_cast<std::uint8_t>(i);
    n += s[i] <= hi ? 1u : 0u;
  }
  return n;
}

/// Counts the block: counts[i] += 1 (when PerCandidate; counts padded) and the result += 1 for
/// every sure pair (s <= lo); `maybe` += candidates with s <= hi (sure, or to re-check).
template <bool PerCandidate, bool Maybe, int Bytes, class T, int D, distance_metric M>
inline std::int64_t count_block(const column_set<T, D, M>& set,
                                const typename column_set<T, D, M>::query& q, std::size_t c0,
                                unsigned len, T lo, T hi, lane_count<T>* counts,
                                std::int64_t& maybe) {
  using S = simd<T, Bytes>;
  using mask = typename S::mask;
  const column_block<T, D, Bytes, M> b(set, q, c0);
  const typename S::vec lo_v = S::splat(lo), hi_v = S::splat(hi);
  mask sure{}, near{};
  auto step = [&](unsigned i, mask valid) {
    const typename S::vec s = b.distances(i);
    const mask hit = (s <= lo_v) & valid;  // -1 where a sure pair
    if constexpr (PerCandidate) S::store(counts + i, S::load(counts + i) - hit);
    sure -= hit;
    if constexpr (Maybe) near -= (s <= hi_v) & valid;
  };
  const mask all = S::first_lanes(S::width);
  unsigned i = 0;
  for (; i + S::width <= len; i += S::width) step(i, all);
  if (i < len) step(i, S::first_lanes(len - i));
  if constexpr (Maybe) maybe += S::sum(near);
  return S::sum(sure);
}

template <bool PerCandidate, bool Maybe, int Bytes, class T, int Every, distance_metric M>
inline std::int64_t count_block(const row_set<T, Every, M>& set,
                                const typename row_set<T, Every, M>::query& q, std::size_t c0,
                                unsigned len, T lo, T hi, lane_count<T>* counts,
                                std::int64_t& maybe) {
  std::int64_t sure = 0;
  for (unsigned i = 0; i < len; ++i) {
    const T s = set.template distance_simd<Bytes>(q, c0 + i, hi);
    const int hit = s <= lo ? 1 : 0;
    if constexpr (PerCandidate) counts[i] += hit;
    sure += hit;
    if constexpr (Maybe) maybe += s <= hi ? 1 : 0;
  }
  return sure;
}

}  // namespace epsjoin::detail::cpu::kernels
