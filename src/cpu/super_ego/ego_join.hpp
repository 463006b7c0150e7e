#pragma once
// The recursive EGO join of SUPER-EGO: two EGO-sorted ranges are split in halves until both are
// small, pairs of ranges that cannot hold a pair within eps are pruned on the way down, and the
// small pairs left are joined by brute force.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/super_ego/ego_prune.hpp"
#include "cpu/super_ego/ego_sort.hpp"

namespace epsjoin::detail::ego {

/// Points in EGO order, dimensions reordered, in the computation type.
template <class T>
struct sorted_points {
  std::vector<T> values;            ///< [n x d, row-major]
  std::vector<std::uint32_t> ids;   ///< [n] the caller's id of each point
  std::size_t n = 0;
  std::size_t d = 0;
  const T* row(std::size_t i) const noexcept { return values.data() + i * d; }
};

/// What one worker did; summed into the join's stats.
struct join_counters {
  std::uint64_t candidates = 0;  ///< distances computed
  std::uint64_t nodes = 0;       ///< range pairs examined by the recursion
  std::uint64_t leaves = 0;      ///< range pairs joined by brute force
};

/// Squared distance <= eps2? With D > 0 the dimension is fixed and the loop fully unrolled
/// (in 1-8 dimensions an early exit costs more branches than it saves); with D == 0 the sum is
/// checked after every four dimensions and abandoned once above eps2. Terms are non-negative
/// and IEEE addition is monotone, so abandoning never changes the answer.
template <class T, int D>
inline bool within(const T* q, const T* p, std::size_t d, T eps2) {
  if constexpr (D > 0) {
    T s = 0;
    for (int k = 0; k < D; ++k) {
      const T t = q[k] - p[k];
      s += t * t;
    }
    return s <= eps2;
  } else {
    T s = 0;
    std::size_t k = 0;
    for (; k + 4 <= d; k += 4) {
      const T t0 = q[k] - p[k];
      const T t1 = q[k + 1] - p[k + 1];
      const T t2 = q[k + 2] - p[k + 2];
      const T t3 = q[k + 3] - p[k + 3];
      s += (t0 * t0 + t1 * t1) + (t2 * t2 + t3 * t3);
      if (s > eps2) return false;
    }
    for (; k < d; ++k) {
      const T t = q[k] - p[k];
      s += t * t;
    }
    return s <= eps2;
  }
}

/// Joins ranges of A (queries) against ranges of B. In a self-join A and B are the same
/// points and only pairs (i, j) with j > i in EGO position are computed; `Out` emits both
/// directions. `Out` receives begin_leaf(b0, b1), row(i, js, m) with the B positions matching
/// A position i, and end_leaf().
template <class T, int D, class Out>
class ego_joiner {
 public:
  ego_joiner(const sorted_points<T>& a, const sorted_points<T>& b, const grid& g, T eps2,
             bool self_join, std::size_t leaf, Out& out, join_counters& counters)
      : a_(a), b_(b), grid_(g), eps2_(eps2), self_(self_join), leaf_(leaf), out_(out),
        counters_(counters), match_(leaf + 1) {}

  /// Joins A positions [a0, a1) with B positions [b0, b1).
  void join(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1) {
    if (a0 >= a1 || b0 >= b1) return;
    if (self_ && b1 <= a0 + 1) return;  // no j > i left
    ++counters_.nodes;
    if (prunable(a0, a1, b0, b1)) return;
    const std::size_t na = a1 - a0;
    const std::size_t nb = b1 - b0;
    if (na <= leaf_ && nb <= leaf_) {
      leaf_join(a0, a1, b0, b1);
    } else if (nb >= na) {
      const std::size_t bm = b0 + nb / 2;
      join(a0, a1, b0, bm);
      join(a0, a1, bm, b1);
    } else {
      const std::size_t am = a0 + na / 2;
      join(a0, am, b0, b1);
      join(am, a1, b0, b1);
    }
  }

 private:
  bool prunable(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1) const {
    auto cell_a = [this](std::size_t i, std::size_t k) {
      return grid_.cell(static_cast<double>(a_.values[i * a_.d + k]), k);
    };
    auto cell_b = [this](std::size_t j, std::size_t k) {
      return grid_.cell(static_cast<double>(b_.values[j * b_.d + k]), k);
    };
    return ego_prunable(cell_a, a0, a1 - 1, cell_b, b0, b1 - 1, a_.d);
  }

  void leaf_join(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1) {
    ++counters_.leaves;
    const std::size_t d = a_.d;
    std::uint32_t* match = match_.data();
    out_.begin_leaf(b0, b1);
    for (std::size_t i = a0; i < a1; ++i) {
      const std::size_t j0 = self_ ? std::max(b0, i + 1) : b0;
      if (j0 >= b1) break;  // in a self-join j0 only grows with i
      const T* q = a_.row(i);
      const T* p = b_.row(j0);
      std::size_t m = 0;
      // Store every candidate, advance only on a hit: no branch to mispredict.
      for (std::size_t j = j0; j < b1; ++j, p += d) {
        match[m] = static_cast<std::uint32_t>(j);
        m += within<T, D>(q, p, d, eps2_) ? 1 : 0;
      }
      counters_.candidates += b1 - j0;
      if (m > 0) out_.row(i, match, m);
    }
    out_.end_leaf();
  }

  const sorted_points<T>& a_;
  const sorted_points<T>& b_;
  const grid& grid_;
  T eps2_;
  bool self_;
  std::size_t leaf_;
  Out& out_;
  join_counters& counters_;
  std::vector<std::uint32_t> match_;
};

}  // namespace epsjoin::detail::ego
