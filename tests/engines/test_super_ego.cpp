// super-ego against the oracle: defaults in float64 and float32, both pruning rules, both
// vector widths (the 32-byte loops run where the CPU has AVX2), and tiny leaf and chunk sizes so
// the recursion splits, prunes and reaches the work queue's later items on small inputs; then
// the engine's own contract cases.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "epsjoin/error.hpp"
#include "support/harness.hpp"
#include "support/seed.hpp"

EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_f64, {"super-ego"});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_f32, {"super-ego", {}, epsjoin::scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_ego_rule_16_byte_f64,
                              {"super-ego", {{"prune", "ego"}, {"simd", "off"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_tiny_f64,
                              {"super-ego", {{"leaf", "2"}, {"chunk", "3"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_tiny_merge_f32,
                              {"super-ego",
                               {{"leaf", "1"}, {"chunk", "7"}, {"sort", "merge"},
                                {"reorder", "variance"}, {"simd", "off"}},
                               epsjoin::scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(super_ego_tiny_ego_rule_f64,
                              {"super-ego",
                               {{"leaf", "5"}, {"chunk", "1"}, {"reorder", "off"},
                                {"prune", "ego"}}});

namespace {

using namespace epsjoin;
using test::engine_config;
using test::run_collect;
using test::same_pairs;

dataset expo_points(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> e(40.0);
  std::vector<double> v(n * d);
  for (double& x : v) {
    do x = e(rng);
    while (x > 1.0);
  }
  return dataset(std::move(v), d);
}

TEST(super_ego, rejects_bad_parameters) {
  const dataset pts = expo_points(10, 2, 1);
  resources res(1);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"leaf", "0"},
                                                        {"leaf", "12x"},
                                                        {"chunk", "-3"},
                                                        {"chunk", ""},
                                                        {"reorder", "sideways"},
                                                        {"sort", "quick"},
                                                        {"prune", "none"},
                                                        {"simd", "avx"}}) {
    join_options opt;
    opt.eps = 0.1;
    opt.engine = "super-ego";
    opt.params[key] = value;
    count_sink sink;
    EXPECT_THROW(self_join(res, pts.view(), opt, sink), epsjoin::invalid_argument) << key << "=" << value;
  }
}

TEST(super_ego, refuses_float32_arithmetic_on_values_beyond_its_range) {
  const dataset pts(std::vector<double>{0.0, 1.0, 1e39, 2.0}, 2);
  resources res(1);
  join_options opt;
  opt.eps = 0.1;
  opt.engine = "super-ego";
  opt.precision = scalar_type::f32;
  count_sink sink;
  EXPECT_THROW(self_join(res, pts.view(), opt, sink), epsjoin::invalid_argument);
  opt.precision = scalar_type::f64;
  EXPECT_NO_THROW(self_join(res, pts.view(), opt, sink));
}

TEST(super_ego, reports_stages_candidates_and_notes) {
  const dataset pts = expo_points(3000, 3, test::test_seed());
  join_stats stats;
  const auto pairs = run_collect({"super-ego"}, pts.view(), pts.view(), true, 0.01, &stats);
  EXPECT_EQ(stats.pairs, pairs.size());
  EXPECT_GE(stats.candidates, pairs.size() / 2);  // each unordered pair computed once
  EXPECT_LT(stats.candidates, 3000u * 2999u / 2);  // and pruning prunes
  std::vector<std::string> names;
  for (const auto& s : stats.stages) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"prepare", "index", "execute"}));
  bool has_order = false;
  for (const auto& [k, v] : stats.notes) has_order = has_order || k == "dimension order";
  EXPECT_TRUE(has_order);
}

// Multiples of 0.1 along one axis at eps = 0.1: pairs at exactly eps that the float64 distance
// accepts or rejects by one rounding, across the grid's cell boundaries. One dimension, so the
// engine's sum is the oracle's, bit for bit: the answers must be identical, no band.
TEST(super_ego, decides_pairs_at_exactly_eps_like_the_oracle) {
  std::vector<double> v;
  for (int k = 0; k < 400; ++k) v.push_back(0.1 * (k % 200) + (k >= 200 ? 1e6 : 0.0));
  const dataset pts(std::move(v), 1);
  for (const auto& params :
       std::vector<std::map<std::string, std::string>>{{}, {{"leaf", "1"}, {"chunk", "2"}},
                                                       {{"prune", "ego"}, {"leaf", "3"}}}) {
    const auto expected = run_collect({"brute-cpu"}, pts.view(), pts.view(), true, 0.1);
    const auto actual = run_collect({"super-ego", params}, pts.view(), pts.view(), true, 0.1);
    EXPECT_GT(expected.size(), 400u);
    EXPECT_EQ(actual, expected);
    const auto cross_expected = run_collect({"brute-cpu"}, pts.view(), pts.view(), false, 0.1);
    const auto cross = run_collect({"super-ego", params}, pts.view(), pts.view(), false, 0.1);
    EXPECT_EQ(cross, cross_expected);
  }
}

// The self-join of `pts` into a CSR table (super-ego's count-then-fill row path) and into a
// per-point counter, both against the oracle's pairs.
void expect_rows_and_counts(const engine_config& config, const dataset& pts, double eps,
                            const std::vector<index_pair>& expected) {
  resources res(3);
  join_options opt;
  opt.eps = eps;
  opt.engine = config.engine;
  opt.params = config.params;
  opt.precision = config.precision;
  csr_sink csr(true);
  self_join(res, pts.view(), opt, csr);
  const neighbor_table table = csr.release();
  std::vector<index_pair> from_rows;
  for (std::size_t i = 0; i < table.n_queries(); ++i) {
    for (const std::uint32_t j : table.row(i)) {
      from_rows.push_back({static_cast<std::uint32_t>(i), j});
    }
  }
  EXPECT_EQ(from_rows, expected);
  std::vector<std::uint64_t> per_point(pts.n(), 0);
  for (const index_pair& p : expected) ++per_point[p.query];
  count_sink counter(true);
  self_join(res, pts.view(), opt, counter);
  EXPECT_EQ(counter.per_point(), per_point);
}

// The same ties in float32 arithmetic, from float64 and float32 input, in 1 to 3 dimensions and
// far from the origin: the float32 sums land on either side of eps^2 by rounding, and only the
// float64 re-check of the band decides them as the oracle does. Every output form: pairs, rows
// (count then fill) and counts.
TEST(super_ego, float32_decides_pairs_at_exactly_eps_like_the_oracle) {
  std::vector<dataset> sets;
  for (std::size_t d : {1u, 2u, 3u}) {
    const int side = d == 1 ? 60 : d == 2 ? 12 : 6;
    for (double offset : {0.0, 1e3}) {
      std::vector<double> v;
      std::vector<int> c(d, 0);
      for (;;) {
        for (std::size_t j = 0; j < d; ++j) v.push_back(offset + 0.1 * c[j]);
        std::size_t j = 0;
        while (j < d && ++c[j] == side) c[j++] = 0;
        if (j == d) break;
      }
      sets.emplace_back(std::move(v), d);
    }
  }
  sets.push_back(dataset::to_f32(sets[2].view()));
  const std::vector<std::map<std::string, std::string>> configs = {
      {}, {{"leaf", "1"}, {"chunk", "2"}}, {{"prune", "ego"}, {"leaf", "3"}, {"simd", "off"}}};
  for (const dataset& pts : sets) {
    for (const auto& params : configs) {
      SCOPED_TRACE(testing::Message() << "d " << pts.d() << ", " << to_string(pts.type())
                                      << ", first " << pts.view().at(0, 0) << ", "
                                      << params.size() << " params");
      const engine_config config{"super-ego", params, scalar_type::f32};
      const auto expected = run_collect({"brute-cpu"}, pts.view(), pts.view(), true, 0.1);
      EXPECT_FALSE(expected.empty());
      EXPECT_EQ(run_collect(config, pts.view(), pts.view(), true, 0.1), expected);
      const auto cross_expected = run_collect({"brute-cpu"}, pts.view(), pts.view(), false, 0.1);
      EXPECT_EQ(run_collect(config, pts.view(), pts.view(), false, 0.1), cross_expected);
      expect_rows_and_counts(config, pts, 0.1, expected);
    }
  }
}

// Input type and computation type chosen independently.
TEST(super_ego, computes_in_the_requested_precision_from_either_input_type) {
  const dataset f64 = expo_points(2000, 4, test::test_seed() + 2);
  const dataset f32 = dataset::to_f32(f64.view());
  const double eps = 0.02;
  for (const dataset* in : {&f64, &f32}) {
    const auto expected = run_collect({"brute-cpu"}, in->view(), in->view(), true, eps);
    for (scalar_type precision : {scalar_type::f64, scalar_type::f32}) {
      const engine_config config{"super-ego", {}, precision};
      const auto actual = run_collect(config, in->view(), in->view(), true, eps);
      EXPECT_TRUE(same_pairs(expected, actual, in->view(), in->view(), eps,
                             test::error_band(config, 4)))
          << "input " << to_string(in->type()) << ", precision " << to_string(precision);
    }
  }
}

// Many chunks on several threads, and a cross join whose sets differ in size and spread.
TEST(super_ego, matches_the_oracle_on_larger_inputs_with_many_chunks) {
  const dataset a = expo_points(6000, 3, test::test_seed() + 3);
  const dataset b = expo_points(4000, 3, test::test_seed() + 4);
  const double eps = 0.012;
  const engine_config config{"super-ego", {{"chunk", "100"}, {"leaf", "16"}}};
  const auto expected = run_collect({"brute-cpu"}, a.view(), a.view(), true, eps);
  const auto actual = run_collect(config, a.view(), a.view(), true, eps, nullptr, 4);
  EXPECT_GT(expected.size(), 6000u);
  EXPECT_TRUE(same_pairs(expected, actual, a.view(), a.view(), eps, 1e-12));
  const auto cross_expected = run_collect({"brute-cpu"}, a.view(), b.view(), false, eps);
  const auto cross = run_collect(config, a.view(), b.view(), false, eps, nullptr, 4);
  EXPECT_TRUE(same_pairs(cross_expected, cross, a.view(), b.view(), eps, 1e-12));
}

TEST(super_ego, reports_progress_up_to_one) {
  const dataset pts = expo_points(5000, 2, 7);
  resources res(2);
  join_options opt;
  opt.eps = 0.01;
  opt.engine = "super-ego";
  opt.params["chunk"] = "64";
  std::vector<double> reports;
  opt.progress = [&](double f) { reports.push_back(f); };
  count_sink sink;
  self_join(res, pts.view(), opt, sink);
  ASSERT_FALSE(reports.empty());
  EXPECT_DOUBLE_EQ(reports.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(reports.begin(), reports.end()));
}

}  // namespace
