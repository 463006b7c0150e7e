// cpu-rtree against the oracle: the full property suite in both precisions, the projected-tree
// path forced on low-d data, mixed input/computation types, and its parameter and stats.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "epsjoin/error.hpp"
#include "support/harness.hpp"

namespace {

using epsjoin::dataset;
using epsjoin::scalar_type;
using epsjoin::test::engine_config;

}  // namespace

EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_rtree_f64, {"cpu-rtree"});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_rtree_f32, {"cpu-rtree", {}, epsjoin::scalar_type::f32});
// A tree over fewer dims than d: the box on a projection is a coarser filter, refinement uses d.
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_rtree_projected_f64, {"cpu-rtree", {{"index_dims", "2"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_rtree_projected_f32,
                              {"cpu-rtree", {{"index_dims", "1"}}, epsjoin::scalar_type::f32});

namespace {

dataset uniform(std::size_t n, std::size_t d, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(n * d);
  for (double& x : v) x = u(rng);
  return dataset(std::move(v), d);
}

// Input of one type computed in the other: the engine converts rows itself.
void check_mixed(scalar_type input, scalar_type precision) {
  dataset pts = uniform(1200, 3, 7);
  if (input == scalar_type::f32) pts = dataset::to_f32(pts.view());
  const double eps = 0.08;
  const engine_config config{"cpu-rtree", {}, precision};
  const auto expected =
      epsjoin::test::run_collect({"brute-cpu"}, pts.view(), pts.view(), true, eps);
  const auto actual = epsjoin::test::run_collect(config, pts.view(), pts.view(), true, eps);
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(epsjoin::test::same_pairs(expected, actual, pts.view(), pts.view(), eps,
                                        epsjoin::test::error_band(config, 3)));
}

TEST(cpu_rtree, f64_input_computed_in_f32) { check_mixed(scalar_type::f64, scalar_type::f32); }
TEST(cpu_rtree, f32_input_computed_in_f64) { check_mixed(scalar_type::f32, scalar_type::f64); }

// The harness forgives pairs at exactly eps (they lie in the band); the contract does not: a
// k x k lattice of spacing eps, in 3 and in 12 dims, has exactly 4 k (k - 1) ordered pairs.
TEST(cpu_rtree, includes_pairs_at_exactly_eps) {
  const std::size_t k = 12;
  const double eps = 0.25;
  for (const std::size_t d : {std::size_t{3}, std::size_t{12}}) {
    std::vector<double> v(k * k * d, 0.5);
    for (std::size_t i = 0; i < k * k; ++i) {
      v[i * d + 1] = 1.0 + static_cast<double>(i % k) * eps;
      v[i * d + d - 1] = -3.0 + static_cast<double>(i / k) * eps;
    }
    const dataset pts(std::move(v), d);
    for (const scalar_type precision : {scalar_type::f64, scalar_type::f32}) {
      for (const char* dims : {"8", "1"}) {
        const engine_config config{"cpu-rtree", {{"index_dims", dims}}, precision};
        const auto pairs = epsjoin::test::run_collect(config, pts.view(), pts.view(), true, eps);
        EXPECT_EQ(pairs.size(), 4 * k * (k - 1))
            << "d=" << d << " " << epsjoin::to_string(precision) << " index_dims=" << dims;
      }
    }
  }
}

TEST(cpu_rtree, rejects_bad_index_dims) {
  const dataset pts = uniform(10, 3, 1);
  for (const char* bad : {"0", "9", "-1", "two", "2x", ""}) {
    epsjoin::resources res(1);
    epsjoin::join_options opt;
    opt.eps = 0.1;
    opt.engine = "cpu-rtree";
    opt.params = {{"index_dims", bad}};
    epsjoin::count_sink sink;
    EXPECT_THROW(epsjoin::self_join(res, pts.view(), opt, sink), epsjoin::invalid_argument)
        << "index_dims='" << bad << "'";
  }
}

// In d = 20 only dims 7 and 13 vary: a 2-dim tree must pick them, and then it filters almost as
// well as the exact answer (few candidates beyond the neighbours), not N^2.
TEST(cpu_rtree, projected_tree_indexes_widest_dims) {
  const std::size_t n = 2000, d = 20;
  const dataset flat = uniform(n, 2, 3);
  std::vector<double> v(n * d, 0.5);
  for (std::size_t i = 0; i < n; ++i) {
    v[i * d + 7] = flat.f64()[i * 2];
    v[i * d + 13] = flat.f64()[i * 2 + 1] * 4;  // widest, so first
  }
  const dataset pts(std::move(v), d);
  const double eps = 0.02;
  epsjoin::join_stats stats;
  const engine_config config{"cpu-rtree", {{"index_dims", "2"}}};
  const auto actual = epsjoin::test::run_collect(config, pts.view(), pts.view(), true, eps, &stats);
  const auto expected =
      epsjoin::test::run_collect({"brute-cpu"}, pts.view(), pts.view(), true, eps);
  EXPECT_TRUE(epsjoin::test::same_pairs(expected, actual, pts.view(), pts.view(), eps, 1e-12));
  const auto note = std::find_if(stats.notes.begin(), stats.notes.end(),
                                 [](const auto& kv) { return kv.first == "indexed dims"; });
  ASSERT_NE(note, stats.notes.end());
  EXPECT_EQ(note->second, "13,7");
  // The box has area (2 eps)^2 against the disc's pi eps^2: candidates < 2x the pairs here.
  EXPECT_GE(stats.candidates, stats.pairs);
  EXPECT_LT(stats.candidates, 2 * stats.pairs + n);
}

TEST(cpu_rtree, reports_stages_and_candidates) {
  const dataset pts = uniform(500, 2, 5);
  epsjoin::join_stats stats;
  epsjoin::test::run_collect({"cpu-rtree"}, pts.view(), pts.view(), true, 0.05, &stats);
  auto has_stage = [&](const std::string& name) {
    return std::any_of(stats.stages.begin(), stats.stages.end(),
                       [&](const auto& s) { return s.name == name; });
  };
  EXPECT_TRUE(has_stage("index"));
  EXPECT_TRUE(has_stage("execute"));
  EXPECT_GT(stats.pairs, 0u);
  EXPECT_GE(stats.candidates, stats.pairs);
  EXPECT_LT(stats.candidates, 500u * 499u);
}

TEST(cpu_rtree, reports_progress_up_to_one) {
  const dataset pts = uniform(3000, 2, 9);
  epsjoin::resources res(1);
  epsjoin::join_options opt;
  opt.eps = 0.01;
  opt.engine = "cpu-rtree";
  std::vector<double> seen;
  opt.progress = [&](double f) { seen.push_back(f); };
  epsjoin::count_sink sink;
  epsjoin::self_join(res, pts.view(), opt, sink);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_EQ(seen.back(), 1.0);
}

TEST(cpu_rtree, says_it_is_single_threaded) {
  for (const auto& e : epsjoin::engines()) {
    if (e.name != "cpu-rtree") continue;
    EXPECT_TRUE(e.available);
    EXPECT_NE(e.description.find("single thread"), std::string::npos) << e.description;
    return;
  }
  FAIL() << "cpu-rtree is not registered";
}

}  // namespace
