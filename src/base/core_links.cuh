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

/// The ordered pair of positions (q, j) found within eps; ids[p] is position p's caller id,
/// read only for a border point. A non-core q links nothing: the pair's other direction carries
/// all it could. Core pairs are united from the smaller position's side only, and most of them
/// end at the first test: once the sets have formed and the finds have halved their paths, both
/// points hang from the same root.
__device__ __forceinline__ void link_pair(const core_links& links, const std::uint32_t* ids,
                                          std::uint32_t q, std::uint32_t j) {
  const std::uint32_t q_parent = load_parent(links.parent, q);
  if (q_parent == core_links::not_core) return;
  const std::uint32_t j_parent = load_parent(links.parent, j);
  if (j_parent == core_links::not_core) {
    // Most pairs of a dense border find the minimum already lower: a load instead of an atomic.
    const std::uint32_t q_id = ids[q];
    if (load_parent(links.min_core, j) > q_id) atomicMin(links.min_core + j, q_id);
    return;
  }
  if (q > j || q_parent == j_parent) return;
  const std::uint32_t q_root = find_root(links.parent, q_parent);
  const std::uint32_t j_root = find_root(links.parent, j_parent);
  if (q_root != j_root) unite(links.parent, q_root, j_root);
}

}  // namespace epsjoin::detail
