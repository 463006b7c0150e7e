// The host index against a naive std::map of cells, the parallel radix sort against
// std::stable_sort, lookups against std::lower_bound, and cpu-grid's neighbour ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "cpu/grid_schedule.hpp"
#include "grid/host_index.hpp"
#include "grid/plan.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace epsjoin::detail::grid {
namespace {

struct built {
  grid_plan plan;
  host_index index;
};

built build(const dataset& pts, double eps, unsigned threads, int max_k = 6) {
  plan_options opt;
  opt.eps = eps;
  opt.max_k = max_k;
  built b{plan_grid(pts.view(), opt, threads), {}};
  b.index = build_host_index(pts.view(), b.plan.geo, b.plan.dim_order, {threads, true, true});
  return b;
}

// Cells the slow way: a map from linear id to the ids of its points in input order.
std::map<std::uint64_t, std::vector<std::uint32_t>> naive_cells(const dataset& pts,
                                                                const geometry& g) {
  std::map<std::uint64_t, std::vector<std::uint32_t>> cells;
  for (std::size_t i = 0; i < pts.n(); ++i) {
    std::vector<double> row(pts.d());
    for (std::size_t j = 0; j < pts.d(); ++j) row[j] = pts.view().at(i, j);
    std::uint64_t id = 0;
    for (int j = 0; j < g.k; ++j) {
      const double x = row[static_cast<std::size_t>(g.dim[j])];
      const auto c = static_cast<std::uint64_t>(std::floor((x - g.origin[j]) * g.inv_side[j]));
      EXPECT_LT(c, g.cells[j]);
      id = id * g.cells[j] + c;
    }
    cells[id].push_back(static_cast<std::uint32_t>(i));
  }
  return cells;
}

void expect_matches_naive(const dataset& pts, const built& b) {
  const host_index& idx = b.index;
  const geometry& g = idx.geo;
  const auto cells = naive_cells(pts, g);
  ASSERT_EQ(idx.n_cells(), cells.size());
  ASSERT_EQ(idx.cell_begin.size(), cells.size() + 1);
  ASSERT_EQ(idx.n_points(), pts.n());
  EXPECT_EQ(idx.outside, 0u);
  std::size_t c = 0;
  for (const auto& [id, members] : cells) {
    EXPECT_EQ(idx.cell_ids[c], id);
    ASSERT_EQ(idx.cell_size(c), members.size());
    for (std::size_t m = 0; m < members.size(); ++m) {
      const std::uint32_t pos = idx.cell_begin[c] + static_cast<std::uint32_t>(m);
      EXPECT_EQ(idx.permutation[pos], members[m]) << "stable: input order within a cell";
      for (std::size_t j = 0; j < pts.d(); ++j) {
        EXPECT_EQ(idx.point(pos)[j],
                  pts.view().at(members[m], static_cast<std::size_t>(idx.dim_order[j])));
      }
    }
    EXPECT_EQ(idx.find(id), c);
    ++c;
  }
  EXPECT_EQ(idx.cell_begin.front(), 0u);
  EXPECT_EQ(idx.cell_begin.back(), pts.n());
  // Masks: exactly the coordinates of non-empty cells, sorted.
  for (int j = 0; j < g.k; ++j) {
    std::vector<std::uint32_t> expected;
    for (const auto& [id, members] : cells) {
      std::uint32_t coords[max_indexed_dims];
      coords_of(g, id, coords);
      expected.push_back(coords[j]);
    }
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    EXPECT_EQ(idx.masks[static_cast<std::size_t>(j)], expected);
    for (std::uint32_t x = 0; x < g.cells[j]; ++x) {
      EXPECT_EQ(idx.mask_has(j, x), std::binary_search(expected.begin(), expected.end(), x));
    }
  }
}

TEST(grid_index, matches_a_naive_map_of_cells) {
  using test::shape_kind;
  for (shape_kind kind : {shape_kind::uniform, shape_kind::skewed, shape_kind::clusters,
                          shape_kind::duplicates, shape_kind::lattice, shape_kind::offset,
                          shape_kind::embedded}) {
    for (std::size_t d : {1u, 2u, 3u, 5u, 9u}) {
      const dataset pts = test::make_shape(kind, 3000, d, test::test_seed());
      for (double eps : {0.003, 0.05, 0.25, 3.0}) {
        SCOPED_TRACE(testing::Message() << to_string(kind) << " d " << d << " eps " << eps);
        expect_matches_naive(pts, build(pts, eps, 3));
      }
    }
  }
}

TEST(grid_index, same_arrays_for_any_thread_count) {
  const dataset pts = test::make_shape(test::shape_kind::skewed, 300000, 3, test::test_seed());
  const built one = build(pts, 0.002, 1);
  for (unsigned threads : {2u, 5u, 16u}) {
    const built many = build(pts, 0.002, threads);
    EXPECT_EQ(one.index.cell_ids, many.index.cell_ids);
    EXPECT_EQ(one.index.cell_begin, many.index.cell_begin);
    EXPECT_EQ(one.index.permutation, many.index.permutation);
    EXPECT_EQ(one.index.points, many.index.points);
    EXPECT_EQ(one.index.masks, many.index.masks);
  }
}

TEST(grid_index, empty_and_single_point) {
  const dataset none(0, 2);
  geometry g;
  g.d = 2;
  const int order[2] = {0, 1};
  const host_index empty = build_host_index(none.view(), g, order, {});
  EXPECT_EQ(empty.n_cells(), 0u);
  EXPECT_EQ(empty.cell_begin.size(), 1u);
  EXPECT_EQ(empty.find(0), host_index::npos);
  const dataset one(std::vector<double>{0.5, 0.5}, 2);
  const built b = build(one, 0.1, 2);
  EXPECT_EQ(b.index.n_cells(), 1u);
  EXPECT_EQ(b.index.permutation, std::vector<std::uint32_t>{0});
}

TEST(grid_index, query_points_outside_another_sets_grid_are_left_out) {
  const dataset data = test::make_shape(test::shape_kind::uniform, 2000, 2, test::test_seed());
  const built b = build(data, 0.05, 2);
  std::vector<double> q = {0.5, 0.5, -3.0, 0.5, 0.5, 1e300, 1.04, -0.04, 0.2, 0.7};
  const dataset queries(std::move(q), 2);
  const host_index qi =
      build_host_index(queries.view(), b.plan.geo, b.plan.dim_order, {2, true, false});
  EXPECT_EQ(qi.outside, 2u);
  EXPECT_EQ(qi.n_points(), 3u);
  std::vector<std::uint32_t> ids = qi.permutation;
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 3, 4}));
}

TEST(grid_index, radix_sort_is_a_stable_sort) {
  std::mt19937_64 rng(test::test_seed());
  for (int bits : {1, 7, 11, 12, 23, 40, 63, 64}) {
    for (std::size_t n : {0u, 1u, 1000u, 200000u}) {
      for (unsigned threads : {1u, 3u, 8u}) {
        std::vector<std::uint64_t> keys(n);
        const std::uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
        // Few distinct keys as well as many, so stability is visible.
        for (auto& k : keys) k = (rng() & mask) >> (bits > 4 && n > 1000 ? rng() % 3 * 2 : 0);
        std::vector<std::uint32_t> values(n);
        for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::uint32_t>(i);
        std::vector<std::pair<std::uint64_t, std::uint32_t>> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = {keys[i], values[i]};
        std::stable_sort(expected.begin(), expected.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        radix_sort_pairs(keys, values, bits, threads);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(keys[i], expected[i].first) << "bits " << bits << " n " << n;
          ASSERT_EQ(values[i], expected[i].second) << "bits " << bits << " n " << n;
        }
      }
    }
  }
}

TEST(grid_index, lookups_agree_with_std_lower_bound) {
  const dataset pts = test::make_shape(test::shape_kind::clusters, 5000, 2, test::test_seed());
  const built b = build(pts, 0.004, 2);
  const auto& ids = b.index.cell_ids;
  ASSERT_GT(ids.size(), 100u);
  std::mt19937_64 rng(test::test_seed());
  for (int t = 0; t < 20000; ++t) {
    const std::uint64_t id = rng() % (ids.back() + 2);
    const std::size_t lo = rng() % ids.size();
    const std::size_t hi = lo + rng() % (ids.size() - lo + 1);
    const auto expected =
        static_cast<std::size_t>(std::lower_bound(ids.begin() + static_cast<std::ptrdiff_t>(lo),
                                                  ids.begin() + static_cast<std::ptrdiff_t>(hi), id) -
                                 ids.begin());
    ASSERT_EQ(b.index.lower_bound(id, lo, hi), expected);
    const std::size_t found = b.index.find(id);
    const bool present = std::binary_search(ids.begin(), ids.end(), id);
    ASSERT_EQ(found != host_index::npos, present);
    if (present) {
      ASSERT_EQ(ids[found], id);
    }
  }
}

// cpu-grid's row lookups (bounded searches, masks) find exactly the cells the plain binary
// search finds, for every pattern, in self-joins and for query cells of another set.
TEST(grid_index, row_lookups_equal_binary_lookups) {
  using cpu::lookup_method;
  using cpu::point_range;
  for (std::size_t d : {1u, 2u, 3u, 4u, 6u}) {
    const dataset pts = test::make_shape(test::shape_kind::skewed, 4000, d, test::test_seed());
    const built b = build(pts, d <= 2 ? 0.004 : 0.02, 2);
    const dataset other = test::make_shape(test::shape_kind::uniform, 500, d, test::test_seed());
    const host_index qi =
        build_host_index(other.view(), b.plan.geo, b.plan.dim_order, {2, false, false});
    auto expand = [&](const std::vector<point_range>& ranges) {
      std::vector<std::uint32_t> positions;
      for (const auto& r : ranges) {
        for (std::uint32_t p = r.begin; p < r.end; ++p) positions.push_back(p);
      }
      return positions;
    };
    for (access_pattern p :
         {access_pattern::full, access_pattern::unicomp, access_pattern::lid_unicomp}) {
      for (const host_index* q : {&b.index, &qi}) {
        // Cursors kept across the cells, visited in increasing id order as the planner does.
        std::vector<std::size_t> cursors(cpu::cursor_count(b.index.geo.k), cpu::no_cursor);
        for (std::size_t c = 0; c < q->n_cells(); ++c) {
          std::uint32_t own[max_indexed_dims];
          q->cell_coords(c, own);
          const std::uint64_t id = q->cell_ids[c];
          const std::size_t near = q == &b.index ? c : b.index.lower_bound(id, 0, b.index.n_cells());
          std::vector<point_range> rows, binary;
          const auto n_rows = cpu::neighbor_ranges(b.index, own, id, near, p, lookup_method::rows,
                                                   true, rows);
          const auto n_binary = cpu::neighbor_ranges(b.index, own, id, near, p,
                                                     lookup_method::binary, false, binary);
          std::vector<point_range> with_cursors;
          const auto n_cursors = cpu::neighbor_ranges(b.index, own, id, near, p,
                                                      lookup_method::rows, false, with_cursors,
                                                      cursors.data());
          std::vector<point_range> tree;
          const auto n_tree = cpu::neighbor_ranges(b.index, own, id, near, p, lookup_method::tree,
                                                   false, tree);
          ASSERT_EQ(n_rows, n_binary);
          ASSERT_EQ(n_cursors, n_binary);
          ASSERT_EQ(n_tree, n_binary);
          ASSERT_EQ(expand(tree), expand(binary)) << "d " << d << " cell " << c;
          ASSERT_EQ(expand(rows), expand(binary)) << "d " << d << " cell " << c;
          ASSERT_EQ(expand(with_cursors), expand(binary)) << "d " << d << " cell " << c;
          for (std::size_t r = 1; r < rows.size(); ++r) {
            ASSERT_LT(rows[r - 1].end, rows[r].begin) << "contiguous ranges are merged";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace epsjoin::detail::grid
