#pragma once
// The recursive EGO join of SUPER-EGO: a part of the queries meets a part of the indexed points;
// if the pair cannot hold a pair of points within eps it is pruned, else the larger part is
// split in two and both halves recurse, until both parts are leaves, joined by brute force.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/super_ego/ego_prune.hpp"
#include "cpu/super_ego/ego_sort.hpp"
#include "cpu/super_ego/ego_tree.hpp"
#include "cpu/super_ego/sorted_points.hpp"

namespace epsjoin::detail::ego {

/// Which test prunes a pair of parts.
enum class prune_rule {
  ego,  ///< SUPER-EGO's rule on the cells of each part's first and last point (ego_prunable)
  box,  ///< the distance between the parts' bounding boxes, and per query in a leaf
};

/// What one worker did; summed into the join's stats.
struct join_counters {
  std::uint64_t candidates = 0;  ///< distances computed
  std::uint64_t nodes = 0;       ///< pairs of parts examined by the recursion
  std::uint64_t leaves = 0;      ///< pairs of leaves joined by brute force
};

/// Squared distance <= eps2? With D > 0 the dimension is fixed and the loop fully unrolled
/// (in 1-8 dimensions an early exit costs more branches than it saves). With D == 0 the
/// dimensions go in blocks of 8, four partial sums per block, and the sum is abandoned after a
/// block once above eps2; since dimensions are reordered most selective first, the early
/// blocks are the likeliest to pass eps2. Blocks of 8 measured 15% faster than blocks of 4 on
/// Expo16D and Expo32D (mispredicted exits), and 3-8% slower than blocks of 16, which we did
/// not take because they leave 9-16 dimensions without any exit. Terms are non-negative and
/// IEEE addition is monotone, so abandoning never changes the answer.
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
    constexpr std::size_t block = 8;
    T s = 0;
    std::size_t k = 0;
    for (; k + block <= d; k += block) {
      T acc[4] = {0, 0, 0, 0};
      for (std::size_t u = 0; u < block; u += 4) {
        for (std::size_t v = 0; v < 4; ++v) {
          const T t = q[k + u + v] - p[k + u + v];
          acc[v] += t * t;
        }
      }
      s += (acc[0] + acc[1]) + (acc[2] + acc[3]);
      if (s > eps2) return false;
    }
    for (; k < d; ++k) {
      const T t = q[k] - p[k];
      s += t * t;
    }
    return s <= eps2;
  }
}

/// Everything a join of A (queries) against B reads; in a self-join a and b are the same.
template <class T>
struct join_inputs {
  const sorted_points<T>& a;
  const ego_tree<T>& tree_a;
  const sorted_points<T>& b;
  const ego_tree<T>& tree_b;
  const grid& cells;
  T eps2;              ///< eps^2 in the computation type: the leaf's test
  double box_limit;    ///< eps^2 * (1 + 2^-20): the box test's (see box_distance2)
  prune_rule rule;
  bool self_join;      ///< only pairs (i, j) with j > i in EGO position are computed
};

/// One worker's join. `Out` receives begin_leaf(b0, b1), then per A position i either
/// row(i, js, m) with the m matching B positions (Out::counts false) or add_row(i, m) after
/// adding each position j's hit to columns()[j - b0] (Out::counts true), then end_leaf().
template <class T, int D, class Out>
class ego_joiner {
 public:
  ego_joiner(const join_inputs<T>& in, std::size_t leaf, Out& out, join_counters& counters)
      : in_(in), out_(out), counters_(counters), match_(leaf + 1) {}

  /// Joins part va of A's tree with part vb of B's tree.
  void join(std::uint32_t va, std::uint32_t vb) {
    const auto& na = in_.tree_a.nodes[va];
    const auto& nb = in_.tree_b.nodes[vb];
    if (in_.self_join && nb.end <= na.begin + 1) return;  // no j > i left
    ++counters_.nodes;
    if (prunable(va, vb)) return;
    const bool leaf_a = in_.tree_a.is_leaf(va);
    const bool leaf_b = in_.tree_b.is_leaf(vb);
    if (leaf_a && leaf_b) {
      leaf_join(na.begin, na.end, nb.begin, nb.end, vb);
    } else if (!leaf_b && (leaf_a || nb.end - nb.begin >= na.end - na.begin)) {
      join(va, nb.left);
      join(va, nb.right);
    } else {
      join(na.left, vb);
      join(na.right, vb);
    }
  }

 private:
  bool prunable(std::uint32_t va, std::uint32_t vb) const {
    const std::size_t d = in_.a.d;
    if (in_.rule == prune_rule::box) {
      return box_distance2(in_.tree_a.lower(va), in_.tree_a.upper(va), in_.tree_b.lower(vb),
                           in_.tree_b.upper(vb), d, in_.box_limit) > in_.box_limit;
    }
    auto cell_a = [this](std::size_t i, std::size_t k) {
      return in_.cells.cell(static_cast<double>(in_.a.values[i * in_.a.d + k]), k);
    };
    auto cell_b = [this](std::size_t j, std::size_t k) {
      return in_.cells.cell(static_cast<double>(in_.b.values[j * in_.b.d + k]), k);
    };
    const auto& na = in_.tree_a.nodes[va];
    const auto& nb = in_.tree_b.nodes[vb];
    return ego_prunable(cell_a, na.begin, na.end - 1, cell_b, nb.begin, nb.end - 1, d);
  }

  void leaf_join(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1,
                 std::uint32_t vb) {
    ++counters_.leaves;
    const std::size_t d = in_.a.d;
    const bool self = in_.self_join;
    const bool box = in_.rule == prune_rule::box;
    const T* lower_b = in_.tree_b.lower(vb);
    const T* upper_b = in_.tree_b.upper(vb);
    std::uint32_t* match = match_.data();
    out_.begin_leaf(b0, b1);
    for (std::size_t i = a0; i < a1; ++i) {
      const std::size_t j0 = self ? std::max(b0, i + 1) : b0;
      if (j0 >= b1) break;  // in a self-join j0 only grows with i
      const T* q = in_.a.row(i);
      // A query far from the leaf's box skips the whole row.
      if (box && box_distance2(q, q, lower_b, upper_b, d, in_.box_limit) > in_.box_limit) {
        continue;
      }
      const T* p = in_.b.row(j0);
      std::size_t m = 0;
      if constexpr (Out::counts) {
        if (self) {
          // Per-row total, and per-column hits for the reverse direction.
          std::uint32_t* col = out_.columns() + (j0 - b0);
          for (std::size_t j = j0; j < b1; ++j, p += d, ++col) {
            const std::uint32_t hit = within<T, D>(q, p, d, in_.eps2) ? 1 : 0;
            m += hit;
            *col += hit;
          }
        } else {
          for (std::size_t j = j0; j < b1; ++j, p += d) m += within<T, D>(q, p, d, in_.eps2);
        }
        out_.add_row(i, m);
      } else {
        // Store every candidate, advance only on a hit: no branch to mispredict.
        for (std::size_t j = j0; j < b1; ++j, p += d) {
          match[m] = static_cast<std::uint32_t>(j);
          m += within<T, D>(q, p, d, in_.eps2) ? 1 : 0;
        }
        if (m > 0) out_.row(i, match, m);
      }
      counters_.candidates += b1 - j0;
    }
    out_.end_leaf();
  }

  const join_inputs<T>& in_;
  Out& out_;
  join_counters& counters_;
  std::vector<std::uint32_t> match_;
};

}  // namespace epsjoin::detail::ego
