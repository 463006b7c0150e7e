// The concurrent union-find under DBSCAN's merge: unions from many threads at once must give
// the partition a sequential union-find gives, with each set's root its smallest id.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "cluster/union_find.hpp"
#include "support/seed.hpp"

namespace {

using epsjoin::detail::concurrent_union_find;

// Plain sequential union-find, the reference.
struct reference_sets {
  std::vector<std::uint32_t> parent;
  explicit reference_sets(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

TEST(concurrent_union_find, many_threads_give_the_sequential_partition) {
  for (std::size_t n : {1u, 2u, 50u, 5000u, 200000u}) {
    for (std::size_t edges_per_point : {0u, 1u, 3u}) {
      std::mt19937_64 rng(epsjoin::test::test_seed() + n + edges_per_point);
      std::vector<std::pair<std::uint32_t, std::uint32_t>> edges(n * edges_per_point);
      // Mostly short edges (chains to merge in many orders), some long ones.
      for (auto& [a, b] : edges) {
        a = static_cast<std::uint32_t>(rng() % n);
        b = rng() % 8 == 0 ? static_cast<std::uint32_t>(rng() % n)
                           : static_cast<std::uint32_t>(std::min<std::uint64_t>(n - 1, a + rng() % 4));
      }
      reference_sets expected(n);
      for (auto [a, b] : edges) expected.unite(a, b);

      std::vector<std::uint32_t> parent(n);
      std::iota(parent.begin(), parent.end(), 0u);
      const concurrent_union_find sets(parent);
      const unsigned threads = 4;
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
          // Each thread takes every edge of its stride, in reverse for odd threads, so unions
          // of one chain race from both ends.
          for (std::size_t k = 0; k < edges.size(); ++k) {
            const std::size_t e = t % 2 ? edges.size() - 1 - k : k;
            if (e % threads == t) sets.unite(edges[e].first, edges[e].second);
          }
        });
      }
      for (auto& th : pool) th.join();
      for (std::uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(sets.find(i), expected.find(i)) << "n " << n << ", point " << i;
        ASSERT_LE(parent[i], i) << "a link points to a larger id";
      }
    }
  }
}

}  // namespace
