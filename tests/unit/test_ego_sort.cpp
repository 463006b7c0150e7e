// The EGO sort: grid geometry, key packing, and both parallel sorts against std::stable_sort.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "cpu/super_ego/ego_sort.hpp"
#include "cpu/super_ego/parallel_sort.hpp"
#include "support/seed.hpp"
#include "support/test_names.hpp"

namespace {

using namespace epsjoin::detail::ego;

// Reference EGO order: std::stable_sort of indices by their cell vectors, cells computed here.
template <class T>
std::vector<std::uint32_t> reference_order(const std::vector<T>& v, std::size_t d, const grid& g) {
  const std::size_t n = v.size() / d;
  std::vector<std::vector<std::int32_t>> cells(n, std::vector<std::int32_t>(d));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < d; ++k) cells[i][k] = g.cell(static_cast<double>(v[i * d + k]), k);
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return cells[a] < cells[b]; });
  return order;
}

template <class T>
grid grid_of(const std::vector<T>& v, std::size_t d, double eps) {
  std::vector<double> lo(d, 1e300), hi(d, -1e300);
  for (std::size_t i = 0; i < v.size(); ++i) {
    lo[i % d] = std::min(lo[i % d], static_cast<double>(v[i]));
    hi[i % d] = std::max(hi[i % d], static_cast<double>(v[i]));
  }
  return make_grid(eps, lo, hi);
}

// Points on a coarse set of values, so many share cells (ties the sort must keep in order).
template <class T>
std::vector<T> tied_points(std::size_t n, std::size_t d, std::uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n * d);
  for (T& x : v) x = static_cast<T>(static_cast<double>(rng() % 64) * scale);
  return v;
}

TEST(ego_grid, cells_are_a_hair_wider_than_eps) {
  const std::vector<double> lo{0.0, -3.0}, hi{1.0, 5.0};
  const grid g = make_grid(0.1, lo, hi);
  for (std::size_t k = 0; k < 2; ++k) {
    const double width = 1.0 / g.inv_width[k];
    EXPECT_GE(width, 0.1 * (1.0 + 0x1p-21));
    EXPECT_LE(width, 0.1 * (1.0 + 0x1p-19));
  }
  EXPECT_EQ(g.cell(0.0, 0), 0);
  EXPECT_EQ(g.cell(0.15, 0), 1);
  EXPECT_EQ(g.cell(-3.0, 1), 0);
  EXPECT_EQ(g.max_cell[0], g.cell(1.0, 0));
  EXPECT_EQ(g.max_cell[0], 9);  // 1.0 / (0.1 * (1 + 2^-20)) is just below 10
}

TEST(ego_grid, huge_ranges_keep_cells_in_thirty_bits) {
  // 1e18 eps-cells; 2e300 wide; wider than the float64 range
  const std::vector<double> lo{0.0, -1e300, -1.7e308}, hi{1e9, 1e300, 1.7e308};
  const grid g = make_grid(1e-9, lo, hi);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_LE(g.max_cell[k], (1 << 30) + 1);
    EXPECT_GT(g.max_cell[k], 1 << 29);
  }
  EXPECT_EQ(g.cell(1.7e308, 2), 0);  // one cell: no pruning, no overflow
  EXPECT_EQ(g.cell(-1.7e308, 2), 0);
}

TEST(ego_keys, pack_leading_dimensions_most_significant_first) {
  grid g;
  g.origin = {0, 0, 0, 0};
  g.inv_width = {1, 1, 1, 1};
  g.max_cell = {1000, 3, 0, (1 << 30)};  // 10 + 2 + 0 + 31 bits
  key_layout k = make_key_layout(g);
  EXPECT_EQ(k.packed, 4u);
  EXPECT_EQ(k.bits, 43u);
  EXPECT_EQ(k.shift, (std::vector<unsigned>{33, 31, 31, 0}));
  g.max_cell = {(1 << 30), (1 << 30), 5};  // 31 + 31 + 3 > 64: the third stays out
  k = make_key_layout(g);
  EXPECT_EQ(k.packed, 2u);
  EXPECT_EQ(k.bits, 62u);
}

struct sort_case {
  std::size_t n, d;
  double eps;
  unsigned threads;
};

void PrintTo(const sort_case& c, std::ostream* out) {
  *out << "n " << c.n << ", d " << c.d << ", eps " << c.eps << ", " << c.threads << " threads";
}

std::string sort_case_name(const testing::TestParamInfo<sort_case>& info) {
  const sort_case& c = info.param;
  std::ostringstream name;
  name << "n" << c.n << "_d" << c.d << "_eps" << epsjoin::test::name_number(c.eps) << "_t"
       << c.threads;
  return name.str();
}

class ego_order_test : public testing::TestWithParam<sort_case> {};

TEST_P(ego_order_test, equals_sequential_stable_sort) {
  const sort_case c = GetParam();
  const std::uint64_t seed = epsjoin::test::test_seed() + c.n * 31 + c.d;
  const auto v = tied_points<double>(c.n, c.d, seed, 0.01);
  const grid g = grid_of(v, c.d, c.eps);
  const auto expected = reference_order(v, c.d, g);
  EXPECT_EQ(ego_order(v.data(), c.n, g, sort_method::radix, c.threads), expected);
  EXPECT_EQ(ego_order(v.data(), c.n, g, sort_method::merge, c.threads), expected);
  const auto f = tied_points<float>(c.n, c.d, seed, 0.01);
  const grid gf = grid_of(f, c.d, c.eps);
  const auto expected_f = reference_order(f, c.d, gf);
  EXPECT_EQ(ego_order(f.data(), c.n, gf, sort_method::radix, c.threads), expected_f);
  EXPECT_EQ(ego_order(f.data(), c.n, gf, sort_method::merge, c.threads), expected_f);
}

INSTANTIATE_TEST_SUITE_P(
    shapes, ego_order_test,
    testing::Values(sort_case{0, 2, 0.05, 2}, sort_case{1, 3, 0.05, 2},
                    sort_case{1000, 1, 0.02, 3}, sort_case{5000, 2, 0.05, 1},
                    sort_case{70000, 2, 0.05, 3},     // several radix blocks, merge runs
                    sort_case{40000, 3, 1e-7, 2},     // 23 bits a dimension: 2 packed, ties
                    sort_case{40000, 12, 1e-7, 4},    // most dimensions break ties
                    sort_case{50000, 40, 10.0, 3}),  // one cell everywhere: all ties
    sort_case_name);

TEST(ego_order, one_huge_tie_run_sorts_on_all_threads) {
  // Leading dimensions identical for all points, the last one spread: keys hold the first
  // dimensions only (each needs 30 bits), so the whole set is one run of equal keys.
  const std::size_t n = 60000, d = 4;
  std::mt19937_64 rng(epsjoin::test::test_seed());
  std::vector<double> v(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    v[i * d + 0] = 0.5;
    v[i * d + 1] = 0.25;
    v[i * d + 2] = 0.75;
    v[i * d + 3] = static_cast<double>(rng() % 1000) * 1e-6;
  }
  std::vector<double> lo{0, 0, 0, 0}, hi{1e3, 1e3, 1e3, 1e-3};
  const grid g = make_grid(1e-6, lo, hi);
  ASSERT_LT(make_key_layout(g).packed, d);
  const auto expected = reference_order(v, d, g);
  EXPECT_EQ(ego_order(v.data(), n, g, sort_method::radix, 3), expected);
  EXPECT_EQ(ego_order(v.data(), n, g, sort_method::merge, 3), expected);
}

TEST(parallel_stable_sort, equals_std_stable_sort_with_many_ties) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  for (std::size_t n : {0u, 1u, 2u, 100u, 1000u, 12345u, 100000u}) {
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      std::vector<std::pair<int, int>> items(n);
      for (std::size_t i = 0; i < n; ++i) items[i] = {static_cast<int>(rng() % 50), static_cast<int>(i)};
      auto expected = items;
      auto by_first = [](const auto& a, const auto& b) { return a.first < b.first; };
      std::stable_sort(expected.begin(), expected.end(), by_first);
      parallel_stable_sort(items, by_first, threads, /*min_chunk=*/64);
      EXPECT_EQ(items, expected) << "n " << n << ", threads " << threads;
    }
  }
}

TEST(parallel_stable_sort, merge_path_split_matches_std_merge) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  std::vector<std::pair<int, int>> left(37), right(53);
  for (std::size_t i = 0; i < left.size(); ++i) left[i] = {static_cast<int>(rng() % 10), 0};
  for (std::size_t i = 0; i < right.size(); ++i) right[i] = {static_cast<int>(rng() % 10), 1};
  auto by_first = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::sort(left.begin(), left.end());
  std::sort(right.begin(), right.end());
  std::vector<std::pair<int, int>> merged;
  std::merge(left.begin(), left.end(), right.begin(), right.end(), std::back_inserter(merged),
             by_first);
  for (std::size_t k = 0; k <= merged.size(); ++k) {
    const std::size_t i =
        merge_path_split(left.begin(), left.size(), right.begin(), right.size(), k, by_first);
    // The first k merged elements are left[0, i) and right[0, k - i).
    const auto from_left = static_cast<std::size_t>(
        std::count_if(merged.begin(), merged.begin() + static_cast<std::ptrdiff_t>(k),
                      [](const auto& p) { return p.second == 0; }));
    EXPECT_EQ(i, from_left) << "k " << k;
  }
}

TEST(radix_sort_by_key, equals_stable_sort_for_every_key_width) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  for (unsigned bits : {1u, 8u, 11u, 12u, 23u, 33u, 64u}) {
    for (unsigned threads : {1u, 2u, 5u}) {
      const std::size_t n = 150000;
      big_vector<key_index> items(n);
      // Few distinct keys spread over the width, so digits repeat and ties are common.
      std::vector<std::uint64_t> pool(300);
      for (auto& k : pool) k = bits == 64 ? rng() : rng() & ((std::uint64_t{1} << bits) - 1);
      for (std::size_t i = 0; i < n; ++i) items[i] = {pool[rng() % pool.size()], static_cast<std::uint32_t>(i)};
      auto expected = items;
      std::stable_sort(expected.begin(), expected.end(),
                       [](const key_index& a, const key_index& b) { return a.key < b.key; });
      radix_sort_by_key(items, bits, threads);
      ASSERT_EQ(items.size(), expected.size());
      bool same = true;
      for (std::size_t i = 0; i < n; ++i) {
        same = same && items[i].key == expected[i].key && items[i].index == expected[i].index;
      }
      EXPECT_TRUE(same) << "bits " << bits << ", threads " << threads;
    }
  }
}

}  // namespace
