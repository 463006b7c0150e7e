// The oracle against a ten-line double loop written here, independently of the library.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "epsjoin/join.hpp"
#include "support/seed.hpp"
#include "support/test_names.hpp"

namespace {

using epsjoin::index_pair;

std::vector<index_pair> naive_self_pairs(const epsjoin::dataset& pts, double eps) {
  std::vector<index_pair> out;
  for (std::uint32_t i = 0; i < pts.n(); ++i) {
    for (std::uint32_t j = 0; j < pts.n(); ++j) {
      if (i == j) continue;
      long double s = 0;
      for (std::size_t k = 0; k < pts.d(); ++k) {
        const long double diff = static_cast<long double>(pts.view().at(i, k)) - pts.view().at(j, k);
        s += diff * diff;
      }
      if (s <= static_cast<long double>(eps) * eps) out.push_back({i, j});
    }
  }
  return out;
}

epsjoin::dataset random_points(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(n * d);
  for (double& x : v) x = u(rng);
  return epsjoin::dataset(std::move(v), d);
}

using oracle_case = std::tuple<std::size_t, std::size_t, double>;  // n, d, eps

class oracle_vs_naive : public testing::TestWithParam<oracle_case> {};

std::string oracle_case_name(const testing::TestParamInfo<oracle_case>& info) {
  const auto [n, d, eps] = info.param;
  std::ostringstream name;
  name << "n" << n << "_d" << d << "_eps" << epsjoin::test::name_number(eps);
  return name.str();
}

TEST_P(oracle_vs_naive, same_pairs) {
  const auto [n, d, eps] = GetParam();
  const auto pts = random_points(n, d, epsjoin::test::test_seed() + n * 131 + d);
  epsjoin::resources res(2);
  epsjoin::join_options opt;
  opt.eps = eps;
  opt.engine = "brute-cpu";
  epsjoin::unique_pairs_sink unique;
  epsjoin::csr_sink csr(true);
  epsjoin::self_join(res, pts.view(), opt, csr);
  const auto stats = epsjoin::self_join(res, pts.view(), opt, unique);

  auto expected = naive_self_pairs(pts, eps);
  std::sort(expected.begin(), expected.end());
  std::vector<index_pair> from_csr;
  const auto& t = csr.table();
  ASSERT_EQ(t.n_queries(), n);
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t j : t.row(i)) from_csr.push_back({i, j});
  }
  EXPECT_EQ(from_csr, expected);
  std::vector<index_pair> half;
  for (auto p : expected) if (p.query < p.neighbor) half.push_back(p);
  EXPECT_EQ(unique.pairs(), half);
  EXPECT_EQ(stats.pairs, expected.size());
  EXPECT_EQ(stats.engine, "brute-cpu");
}

INSTANTIATE_TEST_SUITE_P(shapes, oracle_vs_naive,
                         testing::Values(std::tuple{0, 2, 0.1}, std::tuple{1, 3, 0.1},
                                         std::tuple{2, 1, 2.0}, std::tuple{200, 1, 0.01},
                                         std::tuple{300, 2, 0.05}, std::tuple{300, 5, 0.3},
                                         std::tuple{150, 33, 1.2}, std::tuple{100, 4, 10.0}),
                         oracle_case_name);

}  // namespace
