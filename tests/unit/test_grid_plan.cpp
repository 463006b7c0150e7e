// The planner: how k is chosen, that linear ids never overflow, and the rounding of cell
// coordinates at cell boundaries.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "epsjoin/error.hpp"
#include "grid/host_index.hpp"
#include "grid/plan.hpp"
#include "support/seed.hpp"

namespace epsjoin::detail::grid {
namespace {

column_stats uniform_stats(std::size_t d, double lo, double hi) {
  column_stats s;
  s.min.assign(d, lo);
  s.max.assign(d, hi);
  s.variance.assign(d, (hi - lo) * (hi - lo) / 12);
  return s;
}

// The invariants every plan must hold, whatever the input.
void check_invariants(const grid_plan& p, const plan_options& opt, std::size_t d) {
  const geometry& g = p.geo;
  EXPECT_LE(g.k, opt.max_k);
  EXPECT_EQ(g.d, static_cast<int>(d));
  EXPECT_EQ(p.dim_order.size(), d);
  std::vector<int> sorted = p.dim_order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t j = 0; j < d; ++j) EXPECT_EQ(sorted[j], static_cast<int>(j));
  long double product = 1;
  for (int j = 0; j < g.k; ++j) {
    EXPECT_EQ(p.dim_order[static_cast<std::size_t>(j)], g.dim[j]) << "indexed dims come first";
    EXPECT_GE(g.side[j], opt.eps);
    EXPECT_EQ(g.inv_side[j], 1.0 / g.side[j]);
    EXPECT_GE(g.cells[j], 1u);
    EXPECT_LE(g.cells[j], max_cells_per_dim);
    EXPECT_TRUE(std::isfinite(g.origin[j]));
    product *= g.cells[j];
  }
  EXPECT_LE(product, static_cast<long double>(max_total_cells));
  EXPECT_EQ(static_cast<long double>(g.total_cells), product);
  std::uint64_t stride = 1;
  for (int j = g.k - 1; j >= 0; --j) {
    EXPECT_EQ(g.stride[j], stride);
    stride *= g.cells[j];
  }
}

TEST(grid_plan, low_dimensions_index_every_dimension) {
  for (std::size_t d = 1; d <= 6; ++d) {
    plan_options opt;
    opt.eps = 0.01;
    const grid_plan p = plan_grid(uniform_stats(d, 0.0, 1.0), opt);
    check_invariants(p, opt, d);
    EXPECT_EQ(p.geo.k, static_cast<int>(d));
    for (int j = 0; j < p.geo.k; ++j) EXPECT_EQ(p.geo.cells[j], 102u);  // 100 + one each side
  }
}

TEST(grid_plan, high_dimensions_cap_k_and_prefer_wide_dimensions) {
  const std::size_t d = 128;
  column_stats s = uniform_stats(d, 0.0, 1.0);
  for (std::size_t j = 0; j < d; ++j) {
    s.max[j] = 1.0 + static_cast<double>(j % 7);
    s.variance[j] = s.max[j] * s.max[j] / 12;
  }
  plan_options opt;
  opt.eps = 0.05;
  const grid_plan p = plan_grid(s, opt);
  check_invariants(p, opt, d);
  EXPECT_EQ(p.geo.k, 6);
  for (int j = 0; j < p.geo.k; ++j) EXPECT_EQ(p.geo.dim[j] % 7, 6) << "widest columns first";
  // The unindexed columns follow by decreasing variance.
  for (std::size_t j = 7; j < d; ++j) {
    EXPECT_GE(s.variance[static_cast<std::size_t>(p.dim_order[j - 1])],
              s.variance[static_cast<std::size_t>(p.dim_order[j])]);
  }
  opt.reorder = false;
  const grid_plan q = plan_grid(s, opt);
  check_invariants(q, opt, d);
  for (int j = 0; j < q.geo.k; ++j) EXPECT_EQ(q.geo.dim[j], j) << "column order";
  for (int k = 0; k <= max_indexed_dims; ++k) {
    opt.max_k = k;
    const grid_plan r = plan_grid(s, opt);
    check_invariants(r, opt, d);
    EXPECT_EQ(r.geo.k, k);
  }
  opt.max_k = max_indexed_dims + 1;
  EXPECT_THROW(plan_grid(s, opt), invalid_argument);
}

TEST(grid_plan, ids_never_overflow_with_tiny_eps_or_huge_extents) {
  for (double eps : {1e-300, 1e-200, 1e-30, 1e-12, 1e-6}) {
    for (double extent : {1e-290, 1e-10, 1.0, 1e10, 1e300}) {
      for (std::size_t d : {1u, 2u, 5u, 128u}) {
        plan_options opt;
        opt.eps = eps;
        opt.max_k = 8;
        const grid_plan p = plan_grid(uniform_stats(d, -extent / 2, extent / 2), opt);
        SCOPED_TRACE(testing::Message() << "eps " << eps << " extent " << extent << " d " << d);
        check_invariants(p, opt, d);
        if (extent >= 4 * eps) {
          EXPECT_GE(p.geo.k, 1) << p.reason;
        }
      }
    }
  }
  // max - min itself overflows: not indexable.
  plan_options opt;
  opt.eps = 1.0;
  const grid_plan p = plan_grid(uniform_stats(3, -1.5e308, 1.5e308), opt);
  check_invariants(p, opt, 3);
  EXPECT_EQ(p.geo.k, 0);
}

TEST(grid_plan, narrow_and_constant_dimensions_are_not_indexed) {
  column_stats s = uniform_stats(4, 0.0, 1.0);
  s.max[1] = 0.0;  // constant
  s.max[2] = 0.25;  // spans about 3 cells of 0.1: every cell a neighbour of every other
  s.variance[1] = 0;
  s.variance[2] = 0.005;
  plan_options opt;
  opt.eps = 0.1;
  const grid_plan p = plan_grid(s, opt);
  check_invariants(p, opt, 4);
  EXPECT_EQ(p.geo.k, 2);
  EXPECT_EQ(p.geo.dim[0], 0);
  EXPECT_EQ(p.geo.dim[1], 3);
  // eps larger than every extent: k = 0, one cell.
  opt.eps = 10;
  const grid_plan all = plan_grid(s, opt);
  check_invariants(all, opt, 4);
  EXPECT_EQ(all.geo.k, 0);
  EXPECT_EQ(all.geo.total_cells, 1u);
}

TEST(grid_plan, a_dimension_with_too_many_cells_gets_wider_cells) {
  plan_options opt;
  opt.eps = 1e-12;
  const grid_plan p = plan_grid(uniform_stats(1, 0.0, 1.0), opt);
  check_invariants(p, opt, 1);
  ASSERT_EQ(p.geo.k, 1);
  EXPECT_GT(p.geo.side[0], 1e-10);
  EXPECT_LE(p.geo.cells[0], max_cells_per_dim);
}

// Points within eps (inclusive) of each other are always in adjacent cells, including pairs
// exactly eps apart on cell boundaries and after the rounding of (x - origin) / side.
TEST(grid_plan, points_within_eps_land_in_adjacent_cells) {
  std::mt19937_64 rng(test::test_seed());
  for (double eps : {0.1, 0.25, 1e-3, 1.0 / 3.0, 7e-7}) {
    for (double offset : {0.0, -5.0, 1e6, 1e9}) {
      const double lo = offset, hi = offset + 2000 * eps;
      plan_options opt;
      opt.eps = eps;
      column_stats s;
      s.min = {lo};
      s.max = {hi};
      s.variance = {1};
      const geometry g = plan_grid(s, opt).geo;
      ASSERT_EQ(g.k, 1);
      // The grid has a cell of margin on each side (the first point is in cell 1, or 0 when
      // lo - origin rounds below one side).
      EXPECT_LE(cell_coord(g, 0, lo), 1);
      EXPECT_EQ(cell_coord(g, 0, hi) + 2, static_cast<std::int64_t>(g.cells[0]));
      std::uniform_int_distribution<int> pick(0, 1999);
      for (int t = 0; t < 20000; ++t) {
        // x on a multiple of eps (as computed in floating point), y = x + eps and the doubles
        // around it.
        const double x = lo + eps * pick(rng);
        double y = x + eps;
        for (int step = 0; step < 3; ++step) y = std::nextafter(y, -INFINITY);
        for (int step = 0; step < 6; ++step, y = std::nextafter(y, INFINITY)) {
          if (y > hi || std::fabs(y - x) > eps) continue;
          const std::int64_t cx = cell_coord(g, 0, x), cy = cell_coord(g, 0, y);
          ASSERT_LE(std::llabs(cx - cy), 1) << "x " << x << " y " << y << " eps " << eps;
          ASSERT_GE(cx, 0);
          ASSERT_LT(cy, static_cast<std::int64_t>(g.cells[0]));
        }
      }
    }
  }
}

// Outside points (A x B queries) get -1 or cells, never a wrapped coordinate.
TEST(grid_plan, coordinates_outside_the_grid) {
  plan_options opt;
  opt.eps = 0.1;
  const geometry g = plan_grid(uniform_stats(2, 0.0, 1.0), opt).geo;
  for (double x : {-1e300, -1.0, -0.2000001, -std::numeric_limits<double>::max()}) {
    EXPECT_EQ(cell_coord(g, 0, x), -1) << x;
  }
  for (double x : {1.2000001, 5.0, 1e300, std::numeric_limits<double>::max()}) {
    EXPECT_EQ(cell_coord(g, 0, x), static_cast<std::int64_t>(g.cells[0])) << x;
  }
  const double row[2] = {1e300, 0.5};
  EXPECT_EQ(point_cell_id(g, row), g.total_cells);
}

}  // namespace
}  // namespace epsjoin::detail::grid
