// cpu-grid against the oracle: the whole property suite for each access pattern in float64 and
// float32, then cases aimed at the grid itself.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "epsjoin/error.hpp"

#include "support/harness.hpp"
#include "support/seed.hpp"

using epsjoin::scalar_type;

EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_lid_f64, {"cpu-grid"});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_lid_f32, {"cpu-grid", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_unicomp_f64, {"cpu-grid", {{"pattern", "unicomp"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_unicomp_f32,
                              {"cpu-grid", {{"pattern", "unicomp"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_full_f64, {"cpu-grid", {{"pattern", "full"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_full_f32,
                              {"cpu-grid", {{"pattern", "full"}}, scalar_type::f32});
// The other code paths: row layout with and without early exit, binary-search lookups, no masks.
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_rows_f64,
                              {"cpu-grid", {{"layout", "rows"}, {"early_exit", "8"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_rows_exit16_f32,
                              {"cpu-grid", {{"layout", "rows"}, {"early_exit", "16"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_rows_noexit_f32,
                              {"cpu-grid", {{"layout", "rows"}, {"early_exit", "0"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_baseline_simd_f64, {"cpu-grid", {{"simd", "baseline"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_baseline_simd_f32,
                              {"cpu-grid", {{"simd", "baseline"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_gather_all_f32,
                              {"cpu-grid", {{"gather", "1"}, {"pattern", "full"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_gather_off_f64, {"cpu-grid", {{"gather", "off"}}});
// A self-join's CSR fill: each pair once into both rows (auto's choice for these small tables,
// named here so a change of the threshold keeps it tested), and each row by its own query.
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_fill_halved_f32,
                              {"cpu-grid", {{"fill", "halved"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_fill_full_f64, {"cpu-grid", {{"fill", "full"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(cpu_grid_binary_nomask_f64,
                              {"cpu-grid", {{"lookup", "binary"}, {"masks", "off"},
                                            {"pattern", "unicomp"}}});

namespace epsjoin::test {
namespace {

using pairs = std::vector<index_pair>;

void expect_same_as_oracle(const engine_config& config, const dataset& a, const dataset* b,
                           double eps, join_stats* stats = nullptr, unsigned threads = 3) {
  const dataset_view data = b != nullptr ? b->view() : a.view();
  const dataset_view queries = a.view();
  const bool self = b == nullptr;
  const pairs expected = run_collect({"brute-cpu"}, queries, data, self, eps);
  join_stats s;
  const pairs actual = run_collect(config, queries, data, self, eps, &s, threads);
  EXPECT_TRUE(std::adjacent_find(actual.begin(), actual.end()) == actual.end());
  EXPECT_TRUE(same_pairs(expected, actual, queries, data, eps, error_band(config, a.d())));
  if (stats != nullptr) *stats = s;
}

std::string note(const join_stats& s, const std::string& key) {
  for (const auto& [k, v] : s.notes) {
    if (k == key) return v;
  }
  return {};
}

const std::vector<engine_config>& all_configs() {
  static const std::vector<engine_config> configs = {
      {"cpu-grid"},
      {"cpu-grid", {}, scalar_type::f32},
      {"cpu-grid", {{"pattern", "unicomp"}}},
      {"cpu-grid", {{"pattern", "full"}}},
      {"cpu-grid", {{"pattern", "unicomp"}}, scalar_type::f32},
  };
  return configs;
}

// Every point in one cell: the task of that cell is cut into pieces over the threads.
TEST(cpu_grid, many_points_in_one_cell) {
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v;
  for (int i = 0; i < 1500; ++i) {
    v.push_back(0.5 + 0.001 * u(rng));
    v.push_back(0.5 + 0.001 * u(rng));
  }
  // A few far points so the grid has more than one cell.
  for (int i = 0; i < 50; ++i) {
    v.push_back(u(rng));
    v.push_back(u(rng));
  }
  const dataset pts(std::move(v), 2);
  for (const auto& config : all_configs()) {
    SCOPED_TRACE(config.engine + " " + (config.params.empty() ? "" : config.params.begin()->second));
    join_stats s;
    expect_same_as_oracle(config, pts, nullptr, 0.0012, &s, 4);
    EXPECT_GT(std::stoul(note(s, "tasks")), std::stoul(note(s, "non-empty cells")));
  }
}

TEST(cpu_grid, one_dimension_dense_and_sparse) {
  std::mt19937_64 rng(test_seed() + 1);
  std::exponential_distribution<double> e(40.0);
  std::vector<double> v(3000);
  for (double& x : v) x = e(rng);
  const dataset pts(std::move(v), 1);
  for (const auto& config : all_configs()) {
    for (double eps : {1e-6, 1e-4, 1e-3, 0.01}) {
      SCOPED_TRACE(eps);
      expect_same_as_oracle(config, pts, nullptr, eps);
    }
  }
}

// d = 12 with max 6 indexed dims: k < d, the rest only in the distance.
TEST(cpu_grid, fewer_indexed_dims_than_d) {
  std::mt19937_64 rng(test_seed() + 2);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(2000 * 12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = u(rng) * (1.0 + static_cast<double>(i % 12));
  const dataset pts(std::move(v), 12);
  for (const auto& config : all_configs()) {
    join_stats s;
    expect_same_as_oracle(config, pts, nullptr, 0.9, &s);
    EXPECT_NE(note(s, "grid").find("k=6 of d=12"), std::string::npos) << note(s, "grid");
  }
  // A cap of 2 indexed dimensions, and of 0 (one cell).
  for (const char* k : {"2", "0"}) {
    join_stats s;
    expect_same_as_oracle({"cpu-grid", {{"max_indexed_dims", k}}}, pts, nullptr, 0.9, &s);
    EXPECT_NE(note(s, "grid").find(std::string("k=") + k + " "), std::string::npos)
        << note(s, "grid");
  }
}

// Points exactly on multiples of eps: every neighbour at distance exactly eps must be found.
TEST(cpu_grid, points_on_cell_boundaries) {
  for (std::size_t d : {1u, 2u, 3u}) {
    std::vector<double> v;
    const int side = d == 1 ? 40 : d == 2 ? 12 : 6;
    const double eps = 0.1;  // not exact in binary: multiples of it round both ways
    std::vector<int> c(d, 0);
    for (;;) {
      for (std::size_t j = 0; j < d; ++j) v.push_back(eps * c[j]);
      std::size_t j = 0;
      while (j < d && ++c[j] == side) c[j++] = 0;
      if (j == d) break;
    }
    const dataset pts(std::move(v), d);
    for (const auto& config : all_configs()) {
      expect_same_as_oracle(config, pts, nullptr, eps);
      expect_same_as_oracle(config, pts, nullptr, 0.25);  // exact in binary
    }
  }
}

// Queries of A outside B's grid, on its border, and far away.
TEST(cpu_grid, cross_join_queries_outside_the_grid) {
  std::mt19937_64 rng(test_seed() + 3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> b(3000 * 3), a(800 * 3);
  for (double& x : b) x = u(rng);
  for (double& x : a) x = 3.0 * u(rng) - 1.0;
  a[0] = 1e300;
  a[1] = -1e300;
  const dataset bs(std::move(b), 3), as(std::move(a), 3);
  for (const auto& config : all_configs()) {
    join_stats s;
    expect_same_as_oracle(config, as, &bs, 0.05, &s);
    EXPECT_NE(note(s, "queries outside the grid"), "0");
  }
}

// float32 from float64 input far from the origin: the re-check keeps the result exact.
TEST(cpu_grid, float32_from_offset_float64_input_is_exact) {
  std::mt19937_64 rng(test_seed() + 4);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(4000 * 2);
  for (double& x : v) x = 1e7 + u(rng);
  const dataset pts(std::move(v), 2);
  const double eps = 0.01;
  const pairs expected = run_collect({"brute-cpu"}, pts.view(), pts.view(), true, eps);
  join_stats s;
  const pairs actual =
      run_collect({"cpu-grid", {}, scalar_type::f32}, pts.view(), pts.view(), true, eps, &s);
  EXPECT_TRUE(same_pairs(expected, actual, pts.view(), pts.view(), eps, 1e-12));
}

TEST(cpu_grid, single_thread_and_many_threads_agree) {
  const dataset pts = make_shape(shape_kind::clusters, 3000, 3, test_seed());
  const double eps = eps_for_selectivity(pts.view(), pts.view(), 50);
  const pairs one = run_collect({"cpu-grid"}, pts.view(), pts.view(), true, eps, nullptr, 1);
  const pairs many = run_collect({"cpu-grid"}, pts.view(), pts.view(), true, eps, nullptr, 8);
  EXPECT_EQ(one, many);
  // Count mode: one thread adds into the result directly, several into arrays of their own.
  std::vector<std::uint64_t> expected(pts.n(), 0);
  for (const index_pair& p : one) ++expected[p.query];
  for (unsigned threads : {1u, 2u, 7u}) {
    for (const char* pattern : {"lid-unicomp", "unicomp", "full"}) {
      resources res(threads);
      join_options opt;
      opt.eps = eps;
      opt.engine = "cpu-grid";
      opt.params = {{"pattern", pattern}};
      count_sink counter(true);
      self_join(res, pts.view(), opt, counter);
      EXPECT_EQ(counter.per_point(), expected) << threads << " threads, " << pattern;
    }
  }
}

TEST(cpu_grid, rejects_bad_params) {
  const dataset pts = make_shape(shape_kind::uniform, 10, 2, 1);
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"pattern", "diagonal"}, {"lookup", "hash"}, {"masks", "maybe"},
           {"max_indexed_dims", "9"}, {"early_exit", "4"}, {"layout", "tiles"},
           {"simd", "avx512"}, {"gather", "0"}}) {
    EXPECT_THROW(run_collect({"cpu-grid", {{k, v}}}, pts.view(), pts.view(), true, 0.1),
                 invalid_argument)
        << k << "=" << v;
  }
}

// The candidate count is exact: halved patterns compute each unordered pair of points in
// neighbouring cells once, full twice.
TEST(cpu_grid, halved_patterns_compute_half_the_distances) {
  const dataset pts = make_shape(shape_kind::uniform, 3000, 2, test_seed());
  const double eps = 0.05;
  join_stats lid, uni, full;
  run_collect({"cpu-grid"}, pts.view(), pts.view(), true, eps, &lid);
  run_collect({"cpu-grid", {{"pattern", "unicomp"}}}, pts.view(), pts.view(), true, eps, &uni);
  run_collect({"cpu-grid", {{"pattern", "full"}}}, pts.view(), pts.view(), true, eps, &full);
  EXPECT_EQ(lid.candidates, uni.candidates);
  EXPECT_EQ(2 * lid.candidates + pts.n(), full.candidates);  // full also meets itself
}

}  // namespace
}  // namespace epsjoin::test
