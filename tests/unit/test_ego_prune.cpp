// The EGO pruning rules never drop a pair within eps, above all pairs exactly eps apart across
// cell boundaries, and still prune what is far; plus the partition tree they run on.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/super_ego/ego_prune.hpp"
#include "cpu/super_ego/ego_sort.hpp"
#include "cpu/super_ego/ego_tree.hpp"
#include "support/seed.hpp"

namespace {

using namespace epsjoin::detail::ego;

double dist2(const double* a, const double* b, std::size_t d) {
  double s = 0;
  for (std::size_t k = 0; k < d; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return s;
}

// ego_prunable on two single points, i.e. ranges whose first and last point coincide.
bool prunes_points(const grid& g, const double* a, const double* b, std::size_t d) {
  auto cell_a = [&](std::size_t, std::size_t k) { return g.cell(a[k], k); };
  auto cell_b = [&](std::size_t, std::size_t k) { return g.cell(b[k], k); };
  return ego_prunable(cell_a, 0, 0, cell_b, 0, 0, d);
}

TEST(ego_prune, keeps_pairs_exactly_eps_apart_on_cell_boundaries) {
  // eps = 0.1 is not a binary fraction: k * 0.1 lands on either side of the computed cell
  // boundaries, and (0.3 - 0.2) rounds to just below 0.1. Every pair the float64 distance
  // accepts must survive, whatever cells rounding put its points in.
  for (double eps : {0.1, 0.25, 0.3, 1.0 / 3.0, 1e-3}) {
    for (double offset : {0.0, 1.0, 1e6, -7.5}) {
      std::vector<double> xs;
      for (int k = 0; k <= 40; ++k) xs.push_back(offset + k * eps);
      const std::vector<double> lo{xs.front(), xs.front()}, hi{xs.back(), xs.back()};
      const grid g = make_grid(eps, lo, hi);
      int kept = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        for (std::size_t j = 0; j < xs.size(); ++j) {
          const double a[2] = {xs[i], xs.front()};
          const double b[2] = {xs[j], xs.front()};
          if (dist2(a, b, 2) <= eps * eps) {
            ++kept;
            EXPECT_FALSE(prunes_points(g, a, b, 2))
                << "eps " << eps << ", offset " << offset << ": " << a[0] << " and " << b[0];
            EXPECT_LE(box_distance2(a, a, b, b, 2, 2 * eps * eps), eps * eps * (1 + 0x1p-20));
          }
        }
      }
      EXPECT_GE(kept, 41);
    }
  }
}

TEST(ego_prune, keeps_pairs_at_eps_where_cells_are_huge_numbers) {
  // 1e9 cells of 1e-3 in [o, o + 1e6]: x - o and the product with 1 / width round, so the
  // computed cell of x is off by up to about 1e-7 cells, and without the grid's width margin
  // a point just below a boundary and one eps further compute two cells apart (with a width of
  // exactly eps this test finds hundreds). Walk a few ulps around many boundaries.
  const double eps = 1e-3, o = 100000.1;
  const std::vector<double> lo{o}, hi{o + 1e6};
  const grid g = make_grid(eps, lo, hi);
  int pairs = 0;
  for (std::int64_t c = 100000000; c < 999000000; c += 7919 * 113) {
    const double boundary = o + static_cast<double>(c + 1) * eps;
    double x = boundary;
    for (int s = 0; s < 8; ++s) x = std::nextafter(x, 0.0);
    for (int s = 0; s < 16; ++s, x = std::nextafter(x, 3e6)) {
      double y = x + eps;
      for (int t = 0; t < 4; ++t) y = std::nextafter(y, 3e6);
      for (int t = 0; t < 8; ++t, y = std::nextafter(y, 0.0)) {
        if ((y - x) * (y - x) > eps * eps) continue;
        ++pairs;
        ASSERT_FALSE(prunes_points(g, &x, &y, 1)) << std::hexfloat << x << " and " << y;
      }
    }
  }
  EXPECT_GT(pairs, 1000);
}

TEST(ego_prune, never_prunes_random_pairs_at_about_eps) {
  // Pairs at distance eps * (1 +- 1e-9) in random directions, far from the origin too.
  std::mt19937_64 rng(epsjoin::test::test_seed());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> normal;
  for (std::size_t d : {1u, 2u, 3u, 7u}) {
    for (double offset : {0.0, 1e6}) {
      const double eps = 0.0137;
      const std::vector<double> lo(d, offset - 1), hi(d, offset + 2);
      const grid g = make_grid(eps, lo, hi);
      for (int t = 0; t < 20000; ++t) {
        std::vector<double> a(d), b(d), dir(d);
        double norm = 0;
        for (std::size_t k = 0; k < d; ++k) {
          a[k] = offset + u(rng);
          dir[k] = normal(rng);
          norm += dir[k] * dir[k];
        }
        const double r = eps * (1 + (u(rng) - 0.5) * 2e-9) / std::sqrt(norm);
        for (std::size_t k = 0; k < d; ++k) b[k] = a[k] + dir[k] * r;
        if (dist2(a.data(), b.data(), d) > eps * eps) continue;
        ASSERT_FALSE(prunes_points(g, a.data(), b.data(), d)) << "d " << d << ", offset " << offset;
        ASSERT_LE(box_distance2(a.data(), a.data(), b.data(), b.data(), d, 1.0),
                  eps * eps * (1 + 0x1p-20));
      }
    }
  }
}

TEST(ego_prune, prunes_ranges_two_cells_apart_and_not_adjacent_ones) {
  const std::vector<double> lo{0, 0}, hi{1, 1};
  const grid g = make_grid(0.1, lo, hi);
  const double a[2] = {0.05, 0.55}, near[2] = {0.15, 0.65}, far[2] = {0.25, 0.55};
  EXPECT_FALSE(prunes_points(g, a, near, 2));  // adjacent cells in both dimensions
  EXPECT_TRUE(prunes_points(g, a, far, 2));    // cells 0 and 2 in dimension 0
  const double up[2] = {0.05, 0.95};
  EXPECT_TRUE(prunes_points(g, a, up, 2));     // cells 5 and 9 in dimension 1
  // Dimension 1 only counts while dimension 0 is constant over both ranges.
  auto cell = [&](const double* p) {
    return [&g, p](std::size_t i, std::size_t k) { return g.cell(p[2 * i + k], k); };
  };
  const double range_a[4] = {0.05, 0.55, 0.15, 0.05};  // first (0, 5), last (1, 0)
  const double range_b[4] = {0.05, 0.95, 0.05, 0.99};  // one cell (0, 9)
  EXPECT_FALSE(ego_prunable(cell(range_a), 0, 1, cell(range_b), 0, 1, 2));
}

// Random EGO-sorted sets: whenever a rule prunes a pair of ranges, brute force agrees.
TEST(ego_prune, pruned_range_pairs_hold_no_pair_within_eps) {
  std::mt19937_64 rng(epsjoin::test::test_seed() + 5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t d : {1u, 2u, 3u, 5u}) {
    const std::size_t n = 600;
    const double eps = 0.08;
    sorted_points<double> p;
    p.n = n;
    p.d = d;
    std::vector<double> raw(n * d);
    for (double& x : raw) x = std::floor(u(rng) * 12) * eps / 2;  // many points on boundaries
    const std::vector<double> lo(d, 0.0), hi(d, 6 * eps);
    const grid g = make_grid(eps, lo, hi);
    const auto order = ego_order(raw.data(), n, g, sort_method::radix, 2);
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t k = 0; k < d; ++k) p.values.push_back(raw[order[r] * d + k]);
    }
    auto cell = [&](std::size_t i, std::size_t k) { return g.cell(p.values[i * d + k], k); };
    int pruned = 0;
    for (int t = 0; t < 3000; ++t) {
      std::size_t a0 = rng() % n, a1 = rng() % n, b0 = rng() % n, b1 = rng() % n;
      if (a0 > a1) std::swap(a0, a1);
      if (b0 > b1) std::swap(b0, b1);
      a1 = std::min(a1, a0 + 40);
      b1 = std::min(b1, b0 + 40);
      std::vector<double> la(p.row(a0), p.row(a0) + d), ua = la, lb(p.row(b0), p.row(b0) + d),
          ub = lb;
      for (std::size_t i = a0; i <= a1; ++i) {
        for (std::size_t k = 0; k < d; ++k) {
          la[k] = std::min(la[k], p.row(i)[k]);
          ua[k] = std::max(ua[k], p.row(i)[k]);
        }
      }
      for (std::size_t j = b0; j <= b1; ++j) {
        for (std::size_t k = 0; k < d; ++k) {
          lb[k] = std::min(lb[k], p.row(j)[k]);
          ub[k] = std::max(ub[k], p.row(j)[k]);
        }
      }
      const double limit = eps * eps * (1 + 0x1p-20);
      const bool by_cells = ego_prunable(cell, a0, a1, cell, b0, b1, d);
      const bool by_box = box_distance2(la.data(), ua.data(), lb.data(), ub.data(), d, limit) > limit;
      if (!by_cells && !by_box) continue;
      ++pruned;
      for (std::size_t i = a0; i <= a1; ++i) {
        for (std::size_t j = b0; j <= b1; ++j) {
          ASSERT_GT(dist2(p.row(i), p.row(j), d), eps * eps)
              << "d " << d << ": pruned " << (by_cells ? "by cells" : "by boxes") << " [" << a0
              << ", " << a1 << "] x [" << b0 << ", " << b1 << "] holds " << i << ", " << j;
        }
      }
    }
    EXPECT_GT(pruned, 300) << "d " << d << ": the rules should prune most random range pairs";
  }
}

TEST(ego_tree, parts_partition_their_parent_and_boxes_hold_their_points) {
  std::mt19937_64 rng(epsjoin::test::test_seed() + 9);
  std::exponential_distribution<double> expo(40);
  for (std::size_t leaf : {1u, 3u, 32u}) {
    const std::size_t n = 5000, d = 3;
    const double eps = 0.01;
    std::vector<double> raw(n * d);
    for (double& x : raw) x = std::min(expo(rng), 1.0);
    const std::vector<double> lo(d, 0.0), hi(d, 1.0);
    const grid g = make_grid(eps, lo, hi);
    const auto order = ego_order(raw.data(), n, g, sort_method::radix, 2);
    sorted_points<double> p;
    p.n = n;
    p.d = d;
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t k = 0; k < d; ++k) p.values.push_back(raw[order[r] * d + k]);
    }
    const ego_tree<double> t = build_tree(p, g, leaf, 2);
    ASSERT_FALSE(t.nodes.empty());
    EXPECT_EQ(t.nodes[0].begin, 0u);
    EXPECT_EQ(t.nodes[0].end, n);
    for (std::size_t v = 0; v < t.nodes.size(); ++v) {
      const auto& node = t.nodes[v];
      ASSERT_LT(node.begin, node.end);
      if (t.is_leaf(v)) {
        EXPECT_LE(t.size(v), leaf);
      } else {
        ASSERT_GT(node.left, v);
        EXPECT_EQ(t.nodes[node.left].begin, node.begin);
        EXPECT_EQ(t.nodes[node.left].end, t.nodes[node.right].begin);
        EXPECT_EQ(t.nodes[node.right].end, node.end);
        // A cut between cells of the first dimension in which the part's cells differ.
        const std::size_t cut = t.nodes[node.left].end;
        std::size_t k = 0;
        while (k < d && g.cell(p.row(node.begin)[k], k) == g.cell(p.row(node.end - 1)[k], k)) ++k;
        if (k < d) {
          EXPECT_LT(g.cell(p.row(cut - 1)[k], k), g.cell(p.row(cut)[k], k)) << "node " << v;
        }
      }
      for (std::size_t i = node.begin; i < node.end; ++i) {
        for (std::size_t k = 0; k < d; ++k) {
          ASSERT_LE(t.lower(v)[k], p.row(i)[k]);
          ASSERT_GE(t.upper(v)[k], p.row(i)[k]);
        }
      }
    }
    for (std::size_t chunk : {1u, 100u, 1000000u}) {
      const auto items = work_items(t, chunk);
      std::size_t next = 0;
      for (auto v : items) {
        EXPECT_EQ(t.nodes[v].begin, next);
        EXPECT_TRUE(t.size(v) <= chunk || t.is_leaf(v));
        next = t.nodes[v].end;
      }
      EXPECT_EQ(next, n);
    }
  }
}

}  // namespace
