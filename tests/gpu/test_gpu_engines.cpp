// gpu-sj and brute-gpu against the oracle, and the batch engine's overflow and multi-batch paths.
#include <gtest/gtest.h>

#include "support/harness.hpp"
#include "support/paper_data.hpp"

namespace {

using epsjoin::scalar_type;
using epsjoin::test::engine_config;
using epsjoin::test::paper_expo;
using epsjoin::test::reference_case;

EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_lid_f64, {"gpu-sj"});
EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_unicomp_f64, {"gpu-sj", {{"pattern", "unicomp"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_full_f64, {"gpu-sj", {{"pattern", "full"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_lid_f32, {"gpu-sj", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_unicomp_f32, {"gpu-sj", {{"pattern", "unicomp"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_full_f32, {"gpu-sj", {{"pattern", "full"}}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(brute_gpu_f64, {"brute-gpu"});
EPSJOIN_ENGINE_PROPERTY_TESTS(brute_gpu_f32, {"brute-gpu", {}, scalar_type::f32});
// Tiny buffers: every case runs in many batches, most of which overflow and are re-cut.
EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_overflow,
                              {"gpu-sj", {{"batch_pairs", "64"}, {"batches", "1"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gpu_sj_multibatch, {"gpu-sj", {{"batch_pairs", "2000"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(brute_gpu_overflow,
                              {"brute-gpu", {{"batch_pairs", "100"}, {"batches", "1"}}});

std::uint64_t count_pairs(const std::string& engine, const epsjoin::dataset& pts, double eps,
                          epsjoin::join_options opt = {}) {
  epsjoin::resources res;
  opt.eps = eps;
  opt.engine = engine;
  epsjoin::count_sink sink;
  return epsjoin::self_join(res, pts.view(), opt, sink).pairs;
}

// A small case for compute-sanitizer (scripts/device-check.sh filters on the name).
TEST(gpu_sj, sanitizer_case_small_join_in_every_mode) {
  const auto pts = paper_expo(3, 3000);
  for (std::string pattern : {"full", "unicomp", "lid-unicomp"}) {
    epsjoin::join_options opt;
    opt.params["pattern"] = pattern;
    opt.params["batch_pairs"] = "500";
    const auto counted = count_pairs("gpu-sj", pts, 0.02, opt);
    EXPECT_EQ(counted, count_pairs("brute-cpu", pts, 0.02));
    epsjoin::resources res;
    opt.eps = 0.02;
    opt.engine = "gpu-sj";
    epsjoin::csr_sink csr;
    EXPECT_EQ(epsjoin::self_join(res, pts.view(), opt, csr).pairs, counted);
  }
}

TEST(gpu_sj, agrees_with_cpu_grid_on_a_million_points) {
  const auto pts = paper_expo(2, 1000000);
  const double eps = 0.0002;
  const auto cpu = count_pairs("cpu-grid", pts, eps);
  EXPECT_GT(cpu, 10'000'000u);
  EXPECT_EQ(count_pairs("gpu-sj", pts, eps), cpu);
  // The pair path, with a buffer small enough to need many batches.
  epsjoin::join_options opt;
  opt.params["batch_pairs"] = "3000000";
  epsjoin::resources res;
  opt.eps = eps;
  opt.engine = "gpu-sj";
  std::uint64_t delivered = 0;
  epsjoin::callback_sink sink([&](std::span<const epsjoin::index_pair> b) { delivered += b.size(); });
  const auto stats = epsjoin::self_join(res, pts.view(), opt, sink);
  EXPECT_EQ(delivered, cpu);
  EXPECT_EQ(stats.pairs, cpu);
}

// The papers' reference counts (|R| including the N self pairs), lbjoin issue's table.
class paper_reference : public testing::TestWithParam<reference_case> {};

TEST_P(paper_reference, exact_result_size) {
  const auto c = GetParam();
  const auto pts = paper_expo(c.d, c.n);
  EXPECT_EQ(count_pairs("gpu-sj", pts, c.eps) + c.n, c.with_self);
}

INSTANTIATE_TEST_SUITE_P(lbjoin_table, paper_reference,
                         testing::ValuesIn(epsjoin::test::reference_cases()),
                         epsjoin::test::reference_case_name);

}  // namespace
