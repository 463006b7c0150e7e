// The parallel helpers of core/parallel.hpp: the blocked exclusive scan against a serial one, with
// blocks small enough that many workers share the input, and sizes around the block boundaries.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/parallel.hpp"

namespace {

using epsjoin::detail::exclusive_scan;

TEST(parallel, exclusive_scan_matches_a_serial_scan) {
  std::mt19937 rng(7);
  for (const std::size_t n : {0, 1, 2, 63, 64, 65, 1000, 4097}) {
    for (const std::size_t block : {1, 7, 64, 1 << 16}) {
      std::vector<std::uint32_t> in(n);
      for (auto& x : in) x = rng() % 1000;
      std::vector<std::uint64_t> expected(n + 1, 0), got(n + 1, 12345);
      std::partial_sum(in.begin(), in.end(), expected.begin() + 1,
                       [](std::uint64_t a, std::uint64_t b) { return a + b; });
      exclusive_scan(std::span<const std::uint32_t>(in), std::span<std::uint64_t>(got), 4, block);
      EXPECT_EQ(got, expected) << "n " << n << ", block " << block;
    }
  }
}

}  // namespace
