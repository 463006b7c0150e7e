// Dimension reordering: the selectivity rule we chose from the dissertation's description, and
// where it parts from ordering by variance.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cpu/super_ego/dim_order.hpp"
#include "support/seed.hpp"

namespace {

using namespace epsjoin::detail::ego;

TEST(ego_dim_order, selectivity_estimates_the_one_dimensional_join_fraction) {
  // Uniform in [0, 1]: a fraction 2 eps - eps^2 of pairs lie within eps along a dimension.
  std::mt19937_64 rng(epsjoin::test::test_seed());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::size_t n = 20000, d = 2;
  std::vector<double> v(n * d);
  for (double& x : v) x = u(rng);
  epsjoin::dataset data(std::move(v), d);
  for (double eps : {0.01, 0.05}) {
    const auto s = dimension_selectivity(data.view(), data.view(), eps, 2);
    for (double f : s) EXPECT_NEAR(f, 2 * eps - eps * eps, 0.1 * 2 * eps) << "eps " << eps;
  }
}

TEST(ego_dim_order, puts_dimensions_where_few_pairs_join_first) {
  // Dimension 0: two tight clusters far apart (large variance, yet half of all pairs join
  // along it); dimension 1: uniform in [0, 0.6] (smaller variance, few pairs join); dimension 2:
  // constant (every pair joins). Selectivity: 1, 0, 2. Variance: 0, 1, 2.
  std::mt19937_64 rng(epsjoin::test::test_seed() + 1);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::size_t n = 5000, d = 3;
  std::vector<double> v(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    v[i * d + 0] = (i % 2 ? 1.0 : 0.0) + 1e-4 * u(rng);
    v[i * d + 1] = 0.6 * u(rng);
    v[i * d + 2] = 0.5;
  }
  epsjoin::dataset data(std::move(v), d);
  const double eps = 0.01;
  EXPECT_EQ(dimension_order(data.view(), data.view(), eps, reorder_rule::selectivity, 2),
            (std::vector<std::size_t>{1, 0, 2}));
  EXPECT_EQ(dimension_order(data.view(), data.view(), eps, reorder_rule::variance, 2),
            (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(dimension_order(data.view(), data.view(), eps, reorder_rule::off, 2),
            (std::vector<std::size_t>{0, 1, 2}));
}

TEST(ego_dim_order, a_cross_join_weighs_both_sets) {
  // Along dimension 0 the queries sit far from all indexed points: nothing joins there, so it
  // goes first even though each set alone is tightly packed along it.
  const std::size_t n = 1000;
  std::vector<double> a(n * 2), b(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    a[i * 2] = 0.0;
    b[i * 2] = 5.0;
    a[i * 2 + 1] = b[i * 2 + 1] = static_cast<double>(i % 10) * 0.001;
  }
  epsjoin::dataset da(std::move(a), 2), db(std::move(b), 2);
  EXPECT_EQ(dimension_order(da.view(), db.view(), 0.01, reorder_rule::selectivity, 1),
            (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(dimension_order(db.view(), db.view(), 0.01, reorder_rule::selectivity, 1),
            (std::vector<std::size_t>{0, 1}));  // a tie keeps the input order
}

}  // namespace
