#pragma once
// SUPER-EGO's partitions, made once: EGO-sorted points cut recursively into halves until a
// part has at most `leaf` points. The dissertation describes SUPER-EGO as recursively creating
// partitions "until these partitions reach a given size" and joining the queries against them;
// cutting each sequence the same way whichever chunk of queries meets it lets us compute the
// cuts and each part's bounding box once, instead of once per chunk.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/super_ego/sorted_points.hpp"
#include "cpu/super_ego/ego_sort.hpp"

namespace epsjoin::detail::ego {

template <class T>
struct ego_tree {
  struct node {
    std::uint32_t begin, end;   ///< the part: sorted positions [begin, end)
    std::uint32_t left, right;  ///< children; 0 for a leaf (the root, 0, is nobody's child)
  };
  std::vector<node> nodes;  ///< preorder: a parent before its children; root first
  std::vector<T> boxes;     ///< [nodes x 2d] per node its lower corner, then its upper corner
  std::size_t d = 0;

  bool is_leaf(std::size_t v) const noexcept { return nodes[v].left == 0; }
  std::size_t size(std::size_t v) const noexcept { return nodes[v].end - nodes[v].begin; }
  const T* lower(std::size_t v) const noexcept { return boxes.data() + v * 2 * d; }
  const T* upper(std::size_t v) const noexcept { return lower(v) + d; }
};

/// Where to cut sorted positions [lo, hi) (hi - lo >= 2): near the middle, on a cell boundary
/// of the first dimension in which the range's cells differ, or in the middle when the range
/// is one cell. Kalashnikov cuts sequences in halves by count; cutting on a cell boundary is
/// our choice (both halves then cover fewer cells, so the cell rule prunes more; on Expo2D
/// 1e6 it refined about half the candidates of count halving at leaf 32). Always in (lo, hi).
template <class T>
std::size_t split_point(const sorted_points<T>& p, const grid& g, std::size_t lo, std::size_t hi);

/// The partition tree of `p` with parts of at most `leaf` points (leaf >= 1).
template <class T>
ego_tree<T> build_tree(const sorted_points<T>& p, const grid& g, std::size_t leaf,
                       unsigned threads);

/// The work queue's items: the nodes of at most `chunk` points whose parent has more, in EGO
/// order (they cover every position exactly once).
template <class T>
std::vector<std::uint32_t> work_items(const ego_tree<T>& t, std::size_t chunk);

}  // namespace epsjoin::detail::ego
