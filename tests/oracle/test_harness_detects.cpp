// The harness's comparison must fail when pairs are missing, extra or only near the band.
#include <gtest/gtest.h>

#include "support/harness.hpp"

namespace {

using epsjoin::index_pair;

TEST(harness, detects_missing_and_extra_pairs_outside_band) {
  // Points 0..3 on a line at 0, 1, 2, 10; eps = 1: pairs (0,1),(1,0),(1,2),(2,1).
  epsjoin::dataset pts(std::vector<double>{0, 1, 2, 10}, 1);
  const auto v = pts.view();
  const std::vector<index_pair> expected = {{0, 1}, {1, 0}, {1, 2}, {2, 1}};
  EXPECT_TRUE(epsjoin::test::same_pairs(expected, expected, v, v, 1.0, 1e-12));
  // (0,1) is at distance exactly eps: within eps, so its absence is a miss even inside the band
  // (a '<' where '<=' belongs) ...
  const std::vector<index_pair> without_boundary = {{1, 0}, {1, 2}, {2, 1}};
  EXPECT_FALSE(epsjoin::test::same_pairs(expected, without_boundary, v, v, 1.0, 1e-12));
  // ... while a pair a hair beyond eps (rounding) is forgiven inside the band.
  EXPECT_TRUE(epsjoin::test::same_pairs(expected, without_boundary, v, v, 1.0 - 1e-14, 1e-12));
  // At eps = 1.5 the same absence is a real miss.
  EXPECT_FALSE(epsjoin::test::same_pairs(expected, without_boundary, v, v, 1.5, 1e-12));
  // An extra far pair (0,3) at distance 10 is caught.
  std::vector<index_pair> with_extra = expected;
  with_extra.push_back({0, 3});
  std::sort(with_extra.begin(), with_extra.end());
  EXPECT_FALSE(epsjoin::test::same_pairs(expected, with_extra, v, v, 1.0, 1e-12));
}

TEST(harness, cases_cover_the_required_ranges) {
  std::size_t max_n = 0, max_d = 0, min_d = 1000;
  bool cross = false, empty = false;
  for (const auto& c : epsjoin::test::property_cases()) {
    max_n = std::max(max_n, c.n);
    max_d = std::max(max_d, c.d);
    min_d = std::min(min_d, c.d);
    cross |= !c.self_join;
    empty |= c.n == 0;
  }
  EXPECT_GE(max_n, 2000u);
  EXPECT_EQ(min_d, 1u);
  EXPECT_EQ(max_d, 128u);
  EXPECT_TRUE(cross);
  EXPECT_TRUE(empty);
}

}  // namespace
