// The access patterns over real indexes in d = 1..8: every unordered pair of neighbouring
// non-empty cells is examined exactly once by UNICOMP and LID-UNICOMP, and twice (once from each
// side) by FULL, which also examines each cell's own cell once.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>

#include "grid/geometry.hpp"
#include "grid/host_index.hpp"
#include "grid/plan.hpp"
#include "support/seed.hpp"

namespace epsjoin::detail::grid {
namespace {

dataset random_points(std::size_t n, std::size_t d, std::uint64_t seed, bool skewed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::exponential_distribution<double> e(4.0);
  std::vector<double> v(n * d);
  for (double& x : v) x = skewed ? std::min(1.0, e(rng)) : u(rng);
  return dataset(std::move(v), d);
}

host_index index_for(const dataset& pts, double eps, int max_k = max_indexed_dims) {
  plan_options opt;
  opt.eps = eps;
  opt.max_k = max_k;
  const grid_plan plan = plan_grid(pts.view(), opt, 2);
  return build_host_index(pts.view(), plan.geo, plan.dim_order, {2, true, true});
}

bool adjacent(const geometry& g, const std::uint32_t* a, const std::uint32_t* b) {
  for (int j = 0; j < g.k; ++j) {
    if ((a[j] > b[j] ? a[j] - b[j] : b[j] - a[j]) > 1) return false;
  }
  return true;
}

// For each ordered (visitor, visited) pair of non-empty cells, how often the pattern examined it.
std::map<std::pair<std::size_t, std::size_t>, int> visits_of(const host_index& idx,
                                                             access_pattern p, bool masked) {
  std::map<std::pair<std::size_t, std::size_t>, int> seen;
  for (std::size_t c = 0; c < idx.n_cells(); ++c) {
    std::uint32_t own[max_indexed_dims];
    idx.cell_coords(c, own);
    const cell_box box = masked ? idx.masked_box(own) : neighbor_box(idx.geo, own);
    std::uint64_t previous = 0;
    bool any = false;
    for_each_neighbor(idx.geo, own, box, p, [&](std::uint64_t id) {
      EXPECT_TRUE(!any || id > previous) << "neighbour ids must increase";
      previous = id;
      any = true;
      const std::size_t n = idx.find(id);
      if (n != host_index::npos) ++seen[{c, n}];
    });
  }
  return seen;
}

class grid_patterns : public testing::TestWithParam<int> {};

TEST_P(grid_patterns, each_neighbouring_cell_pair_the_right_number_of_times) {
  const auto d = static_cast<std::size_t>(GetParam());
  for (bool skewed : {false, true}) {
    // About 4 to 8 cells per dimension and enough points that many cells are non-empty.
    const double eps = d <= 3 ? 0.04 : d <= 5 ? 0.15 : 0.22;
    const dataset pts = random_points(d <= 3 ? 1500 : 700, d, test::test_seed() + d, skewed);
    const host_index idx = index_for(pts, eps);
    ASSERT_EQ(idx.geo.k, static_cast<int>(d)) << "every dimension should be indexed, skewed " << skewed;
    const geometry& g = idx.geo;

    // The truth, naively: all pairs of non-empty cells whose coordinates differ by <= 1.
    std::set<std::pair<std::size_t, std::size_t>> neighbours;  // unordered, first < second
    std::vector<std::array<std::uint32_t, max_indexed_dims>> coords(idx.n_cells());
    for (std::size_t c = 0; c < idx.n_cells(); ++c) idx.cell_coords(c, coords[c].data());
    for (std::size_t a = 0; a < idx.n_cells(); ++a) {
      for (std::size_t b = a + 1; b < idx.n_cells(); ++b) {
        if (adjacent(g, coords[a].data(), coords[b].data())) neighbours.insert({a, b});
      }
    }
    ASSERT_GE(2 * neighbours.size(), idx.n_cells()) << "too sparse to test anything";

    for (bool masked : {false, true}) {
      SCOPED_TRACE(std::string(skewed ? "skewed" : "uniform") + (masked ? ", masked" : ""));
      for (access_pattern p : {access_pattern::unicomp, access_pattern::lid_unicomp}) {
        const auto seen = visits_of(idx, p, masked);
        std::size_t total = 0;
        for (const auto& [pair, times] : seen) {
          EXPECT_NE(pair.first, pair.second) << "halving patterns leave the own cell out";
          EXPECT_EQ(times, 1);
          const auto key = std::minmax(pair.first, pair.second);
          EXPECT_TRUE(neighbours.count({key.first, key.second}));
          const auto reverse = seen.find({pair.second, pair.first});
          EXPECT_TRUE(reverse == seen.end()) << "pair examined from both sides";
          if (p == access_pattern::lid_unicomp) {
            EXPECT_GT(idx.cell_ids[pair.second], idx.cell_ids[pair.first]);
          }
          total += times;
        }
        EXPECT_EQ(total, neighbours.size());
      }
      const auto seen = visits_of(idx, access_pattern::full, masked);
      std::size_t own = 0, others = 0;
      for (const auto& [pair, times] : seen) {
        EXPECT_EQ(times, 1);
        if (pair.first == pair.second) {
          ++own;
        } else {
          ++others;
          const auto key = std::minmax(pair.first, pair.second);
          EXPECT_TRUE(neighbours.count({key.first, key.second}));
        }
      }
      EXPECT_EQ(own, idx.n_cells());
      EXPECT_EQ(others, 2 * neighbours.size());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(d, grid_patterns, testing::Range(1, 9),
                         [](const testing::TestParamInfo<int>& d) {
                           std::string name = "d";  // not "d" + ...: GCC 12's -Wrestrict misfires
                           return name += std::to_string(d.param);
                         });

// The row enumeration is the cell enumeration grouped by rows of 3 consecutive ids.
TEST(grid_patterns, rows_group_consecutive_ids) {
  geometry g;
  g.k = 3;
  g.d = 3;
  g.eps = 1;
  for (int j = 0; j < 3; ++j) {
    g.dim[j] = j;
    g.side[j] = 1;
    g.inv_side[j] = 1;
    g.cells[j] = 5;
  }
  g.stride[2] = 1;
  g.stride[1] = 5;
  g.stride[0] = 25;
  g.total_cells = 125;
  for (access_pattern p :
       {access_pattern::full, access_pattern::unicomp, access_pattern::lid_unicomp}) {
    for (std::uint32_t id = 0; id < 125; ++id) {
      std::uint32_t own[max_indexed_dims];
      coords_of(g, id, own);
      const cell_box box = neighbor_box(g, own);
      std::vector<std::uint64_t> cells, from_rows;
      for_each_neighbor(g, own, box, p, [&](std::uint64_t n) { cells.push_back(n); });
      // Reference: all offsets, filtered with visits().
      std::vector<std::uint64_t> reference;
      for (int o0 = -1; o0 <= 1; ++o0) {
        for (int o1 = -1; o1 <= 1; ++o1) {
          for (int o2 = -1; o2 <= 1; ++o2) {
            const int off[3] = {o0, o1, o2};
            std::uint32_t c[3];
            bool inside = true;
            for (int j = 0; j < 3; ++j) {
              const int v = static_cast<int>(own[j]) + off[j];
              inside &= v >= 0 && v < 5;
              c[j] = static_cast<std::uint32_t>(v);
            }
            if (inside && visits(p, 3, own, off)) reference.push_back(linear_id(g, c));
          }
        }
      }
      std::sort(reference.begin(), reference.end());
      EXPECT_EQ(cells, reference) << "cell " << id;
      // The parity rule of UNICOMP: a cell with all coordinates even examines nothing.
      if (p == access_pattern::unicomp && !(own[0] & 1) && !(own[1] & 1) && !(own[2] & 1)) {
        EXPECT_TRUE(cells.empty());
      }
    }
  }
}

TEST(grid_patterns, k_zero_is_one_cell) {
  geometry g;
  g.d = 4;
  g.eps = 1;
  std::uint32_t own[max_indexed_dims] = {};
  const cell_box box = neighbor_box(g, own);
  int full = 0, lid = 0, uni = 0;
  for_each_neighbor(g, own, box, access_pattern::full, [&](std::uint64_t id) {
    EXPECT_EQ(id, 0u);
    ++full;
  });
  for_each_neighbor(g, own, box, access_pattern::lid_unicomp, [&](std::uint64_t) { ++lid; });
  for_each_neighbor(g, own, box, access_pattern::unicomp, [&](std::uint64_t) { ++uni; });
  EXPECT_EQ(full, 1);
  EXPECT_EQ(lid, 0);
  EXPECT_EQ(uni, 0);
}

}  // namespace
}  // namespace epsjoin::detail::grid
