#pragma once
// The recursive EGO join of SUPER-EGO: a part of the queries meets a part of the indexed points;
// if the pair cannot hold a pair of points within eps it is pruned, else the larger part is
// split in two and both halves recurse, until both parts are leaves, joined by brute force.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/cancellation.hpp"
#include "cpu/super_ego/ego_leaf.hpp"
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
  std::uint64_t rechecks = 0;    ///< float32 sums in the band, decided in float64
};

/// Everything a join of A (queries) against B reads; in a self-join a and b are the same.
template <class T>
struct join_inputs {
  const sorted_points<T>& a;
  const ego_tree<T>& tree_a;
  const sorted_points<T>& b;
  const ego_tree<T>& tree_b;
  const grid& cells;
  T eps2;              ///< the leaf's test: a sum at most this is a hit
  double box_limit;    ///< radius^2 * (1 + 2^-20): the box test's (see box_distance2)
  prune_rule rule;
  bool self_join;      ///< only pairs (i, j) with j > i in EGO position are computed
  /// float32's band (base/float_band.hpp): sums above eps2 and at most band_hi are decided in
  /// float64 through `exact`. Null: the leaf's test is final. With a band, the grid and
  /// box_limit are built for the radius sqrt(band_hi), so no pair the band may hold is pruned.
  const exact_check* exact = nullptr;
  T band_hi = 0;
};

/// One worker's join. `Out` receives begin_leaf(b0, b1), then per A position i either
/// row(i, js, m) with the m matching B positions (Out::counts false) or add_row(i, m) after
/// adding each position j's hit to columns()[j - b0] (Out::counts true; lane_count<T> counters
/// with room for leaf + simd_pad), then end_leaf(). `wide`: use the 32-byte leaf loops.
template <class T, int D, class Out>
class ego_joiner {
 public:
  ego_joiner(const join_inputs<T>& in, std::size_t leaf, Out& out, join_counters& counters,
             bool wide)
      : in_(in), out_(out), counters_(counters), match_(leaf + 1) {
    columns_.resize(in.b.d);
    for (std::size_t k = 0; k < in.b.d; ++k) columns_[k] = in.b.column(k);
    leaf_fn_ = &leaf_rows_16<T, D, Out>;
#if EPSJOIN_ISA_HAS_V3
    if (wide) leaf_fn_ = &leaf_rows_32<T, D, Out>;
#endif
    (void)wide;
  }

  /// Joins part va of A's tree with part vb of B's tree.
  void join(std::uint32_t va, std::uint32_t vb) {
    const auto& na = in_.tree_a.nodes[va];
    const auto& nb = in_.tree_b.nodes[vb];
    if (in_.self_join && nb.end <= na.begin + 1) return;  // no j > i left
    // A work item joins a part of A with all of B: seconds in many dimensions, so Ctrl-C is
    // heard from inside it (every 64 nodes: a few loads, next to a node's pruning test).
    if (++counters_.nodes % 64 == 0) cancellation_point();
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
    const leaf_scope<T> scope{&in_.a,
                              columns_.data(),
                              in_.b.column_stride,
                              in_.b.ids.data(),
                              a0,
                              a1,
                              b0,
                              b1,
                              in_.self_join,
                              in_.eps2,
                              in_.band_hi,
                              in_.exact,
                              &counters_.rechecks,
                              in_.tree_b.lower(vb),
                              in_.tree_b.upper(vb),
                              in_.rule == prune_rule::box,
                              in_.box_limit};
    counters_.candidates += leaf_fn_(scope, out_, match_.data());
  }

  const join_inputs<T>& in_;
  Out& out_;
  join_counters& counters_;
  std::vector<std::uint32_t> match_;
  // B's columns and the leaf loop for this CPU.
  std::vector<const T*> columns_;
  std::uint64_t (*leaf_fn_)(const leaf_scope<T>&, Out&, std::uint32_t*) = nullptr;
};

}  // namespace epsjoin::detail::ego
