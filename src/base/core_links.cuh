#pragma once
// The device side of core_links.hpp: a lock-free union-find in the style of ECL-CC. Every link
// goes from a root to a smaller root by one atomicCAS that holds only while the linked node is
// still a root, so each set's root is its smallest member whatever order the pairs come in;
// finds halve their path with plain stores, which is safe because only roots are ever linked (a
// non-root's entry can only be pointed further up by anyone, so a stale halving still writes an
// ancestor).

#include <cstdint>

#include "base/core_links.hpp"

namespace epsjoin::detail {

// Other threads link and halve concurrently: every read goes to memory.
__device__ __forceinline__ std::uint32_t load_parent(const std::uint32_t* parent,
                                                     std::uint32_t x) {
  return *reinterpret_cast<const volatile std::uint32_t*>(parent + x);
}

__device__ inline std::uint32_t find_root(std::uint32_t* parent, std::uint32_t x) {
  std::uint32_t p = load_parent(parent, x);
  while (p != x) {
    const std::uint32_t g = load_parent(parent, p);
    if (g == p) return p;
    *reinterpret_cast<volatile std::uint32_t*>(parent + x) = g;
    x = g;
    p = load_parent(parent, x);
  }
  return x;
}

/// Unites the sets of the core points a and b.
__device__ inline void unite(std::uint32_t* parent, std::uint32_t a, std::uint32_t b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  while (a != b) {
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t seen = atomicCAS(parent + b, b, a);
    if (seen == b) return;
    // b was linked meanwhile: start again from both roots.
    a = find_root(parent, a);
    b = find_root(parent, seen);
  }
}

__device__ __forceinline__ void lower_min_core(const core_links& links, std::uint32_t point,
                                               std::uint32_t core_id) {
  // Most pairs of a dense border find the minimum already lower: a load instead of an atomic.
  if (load_parent(links.min_core, point) > core_id) atomicMin(links.min_core + point, core_id);
}

/// q's root as a pass over q's pairs first sees it: its parent (an ancestor), or not_core.
__device__ __forceinline__ std::uint32_t seen_root(const core_links& links, std::uint32_t q) {
  return load_parent(links.parent, q);
}

/// The pair of positions (q, j) found within eps, linked in both directions (so a pass may visit
/// each unordered pair once, or each ordered pair: linking twice changes nothing); ids[p] is
/// position p's caller id, read only for a border point. `q_root` is q's root as last seen
/// (seen_root, then updated here): an ancestor of q, because roots only ever gain parents, so
/// a neighbour that reaches it is in q's set already. A pass that keeps it across q's pairs
/// settles most core pairs with the one load that tells j core from not.
__device__ __forceinline__ void link_pair(const core_links& links, const std::uint32_t* ids,
                                          std::uint32_t q, std::uint32_t j,
                                          std::uint32_t& q_root) {
  const std::uint32_t j_parent = load_parent(links.parent, j);
  if (q_root == core_links::not_core) {
    if (j_parent != core_links::not_core) lower_min_core(links, q, ids[j]);
    return;
  }
  if (j_parent == core_links::not_core) {
    lower_min_core(links, j, ids[q]);
    return;
  }
  if (j_parent == q_root) return;
  const std::uint32_t j_root = find_root(links.parent, j_parent);
  if (j_root == q_root) return;
  q_root = find_root(links.parent, q_root);
  if (j_root == q_root) return;
  unite(links.parent, q_root, j_root);
  q_root = find_root(links.parent, q_root);
}

/// The same without a kept root, for a pass that holds several queries at once.
__device__ __forceinline__ void link_pair(const core_links& links, const std::uint32_t* ids,
                                          std::uint32_t q, std::uint32_t j) {
  std::uint32_t q_root = seen_root(links, q);
  link_pair(links, ids, q, j, q_root);
}

}  // namespace epsjoin::detail
