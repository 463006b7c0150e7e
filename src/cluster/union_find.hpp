#pragma once
// A lock-free union-find over point ids, shared by the threads that deliver a join's pairs.
//
// Every link points from a root to a smaller root, so parent[x] <= x always holds and the root
// of a set is its smallest id: no rank is kept, and the final roots are deterministic whatever
// order the unions arrive in. A link is one compare-and-swap that succeeds only while the
// linked node is still a root; a failed one means another thread moved that root, and the
// union starts again from the new roots. Finds halve the path they walk (each node visited is
// pointed at its grandparent), also by compare-and-swap, so a lost race only skips a shortcut.
//
// Ids may be left out of the structure (DBSCAN's non-core points): their entry holds
// `not_member`, so one load of an entry both says whether the id takes part and starts its find.

#include <atomic>
#include <cstdint>
#include <span>
#include <utility>

namespace epsjoin::detail {

class concurrent_union_find {
 public:
  /// The entry of an id that is in no set; find and unite are never called on one.
  static constexpr std::uint32_t not_member = UINT32_MAX;

  /// Works on `parent`, whose entries the caller has set to their own index (every member a
  /// root of its own) or to not_member.
  explicit concurrent_union_find(std::span<std::uint32_t> parent) : parent_(parent) {}

  bool is_member(std::uint32_t x) const { return load(x) != not_member; }

  std::uint32_t find(std::uint32_t x) const {
    for (;;) {
      std::uint32_t p = load(x);
      if (p == x) return x;
      const std::uint32_t g = load(p);
      if (g == p) return p;
      // Halving: a failure means someone already shortened the path further.
      std::atomic_ref<std::uint32_t>(parent_[x]).compare_exchange_weak(p, g, std::memory_order_acq_rel,
                                                                       std::memory_order_relaxed);
      x = g;
    }
  }

  /// Asks for x's parent entry ahead of a find (the ids of a join's pairs jump around memory).
  void prefetch(std::uint32_t x) const { __builtin_prefetch(parent_.data() + x); }

  /// Puts a and b in one set; returns at once when they already share one.
  void unite(std::uint32_t a, std::uint32_t b) const {
    for (;;) {
      a = find(a);
      b = find(b);
      if (a == b) return;
      if (a > b) std::swap(a, b);
      std::uint32_t expected = b;
      if (std::atomic_ref<std::uint32_t>(parent_[b]).compare_exchange_strong(
              expected, a, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return;
      }
    }
  }

 private:
  std::uint32_t load(std::uint32_t x) const {
    return std::atomic_ref<std::uint32_t>(parent_[x]).load(std::memory_order_acquire);
  }
  std::span<std::uint32_t> parent_;
};

}  // namespace epsjoin::detail
