// gds-join and ted-join against the oracle: every shape of the property harness (d 1 to 128,
// tiny and huge eps, offset data), indexed and brute force, both precisions; ted-join's rounding
// band on pairs placed just inside and just outside eps far from the origin; |R| of all GPU
// engines and the oracle on 1e5-point sets; the papers' reference counts through the CSR path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>

#include "epsjoin/error.hpp"
#include "support/harness.hpp"
#include "support/paper_data.hpp"
#include "support/shapes.hpp"

namespace {

using epsjoin::scalar_type;
using epsjoin::test::paper_expo;
using epsjoin::test::reference_case;

EPSJOIN_ENGINE_PROPERTY_TESTS(gds_f64, {"gds-join"});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_f32, {"gds-join", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_brute_f64, {"gds-join", {{"mode", "brute-force"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_brute_full_f32, {"gds-join",
                                                   {{"mode", "brute-force"}, {"pattern", "full"}},
                                                   scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_lanes1_full_f64,
                              {"gds-join", {{"lanes", "1"}, {"pattern", "full"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_lanes32_queue_f64,
                              {"gds-join",
                               {{"lanes", "32"}, {"queue", "on"}, {"index_dims", "3"}}});

EPSJOIN_ENGINE_PROPERTY_TESTS(ted_f64, {"ted-join"});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_f32, {"ted-join", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_brute_f64, {"ted-join", {{"mode", "brute-force"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_brute_full_f32, {"ted-join",
                                                   {{"mode", "brute-force"}, {"pattern", "full"}},
                                                   scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_full_records_f64,
                              {"ted-join", {{"pattern", "full"}, {"fill", "records"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_second_pass_short_circuit_f64,
                              {"ted-join", {{"fill", "second-pass"}, {"short_circuit", "on"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_short_circuit_brute_f32,
                              {"ted-join",
                               {{"short_circuit", "on"}, {"mode", "brute-force"}},
                               scalar_type::f32});
// Both tile shapes at every d (the default takes 16 columns below 32-D and 32 from there).
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_tile32_f64, {"ted-join", {{"tile_cols", "32"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_tile32_full_f32, {"ted-join",
                                                    {{"tile_cols", "32"}, {"pattern", "full"}},
                                                    scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_tile16_brute_f64,
                              {"ted-join", {{"tile_cols", "16"}, {"mode", "brute-force"}}});
// The one-cell (GEMM) kernel, which brute force and unindexable eps take by default (with
// m16n8k8 on sm_90, the device machine's H100; an sm_80 device refuses m16n8k8 by name): records,
// second passes under halving and full (the kernels that once disagreed with the counting pass),
// many segments (the fill falls back to full, segment by segment), each instruction shape; and
// the tiles kernel forced in brute force by name.
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_full_records_f64,
    {"ted-join", {{"mode", "brute-force"}, {"pattern", "full"}, {"fill", "records"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m8n8k4_second_pass_f32,
    {"ted-join",
     {{"kernel", "gemm"}, {"mma", "m8n8k4"}, {"mode", "brute-force"}, {"fill", "second-pass"}},
     scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m8n8k4_segments_f64,
    {"ted-join",
     {{"mode", "brute-force"}, {"mma", "m8n8k4"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_segments_f64,
    {"ted-join", {{"mode", "brute-force"}, {"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m16n8k8_second_pass_f64,
    {"ted-join", {{"mode", "brute-force"}, {"mma", "m16n8k8"}, {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m16n8k8_full_second_pass_f32,
    {"ted-join",
     {{"mode", "brute-force"}, {"mma", "m16n8k8"}, {"pattern", "full"}, {"fill", "second-pass"}},
     scalar_type::f32});
// The other sm_90 shapes, m16n8k4 and m16n8k16 (measured against m16n8k8 in bench/RESULTS.md).
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m16n8k4_second_pass_f64,
    {"ted-join", {{"mode", "brute-force"}, {"mma", "m16n8k4"}, {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m16n8k4_full_records_f32,
    {"ted-join",
     {{"mode", "brute-force"}, {"mma", "m16n8k4"}, {"pattern", "full"}, {"fill", "records"}},
     scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m16n8k16_full_second_pass_f64,
    {"ted-join",
     {{"mode", "brute-force"}, {"mma", "m16n8k16"}, {"pattern", "full"}, {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_gemm_m16n8k16_records_f32,
                              {"ted-join",
                               {{"mode", "brute-force"}, {"mma", "m16n8k16"}, {"fill", "records"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_gemm_m8n8k4_full_records_f32,
    {"ted-join",
     {{"mode", "brute-force"}, {"mma", "m8n8k4"}, {"pattern", "full"}, {"fill", "records"}},
     scalar_type::f32});
// The GEMM kernel on an indexed join: every pair in position order, the cells ignored.
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_gemm_over_index_f64, {"ted-join", {{"kernel", "gemm"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_gemm_over_index_full_second_pass_f32,
                              {"ted-join",
                               {{"kernel", "gemm"}, {"pattern", "full"}, {"fill", "second-pass"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_tiles_brute_full_f64,
    {"ted-join", {{"kernel", "tiles"}, {"mode", "brute-force"}, {"pattern", "full"}}});
// The tiles kernel's two-coordinate loads feeding m16n8k8 (sm_90: the default there, so the
// default suites run it too), counting and both fills; and m8n8k4 by name.
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_tiles_m16n8k8_f64,
                              {"ted-join", {{"mma", "m16n8k8"}, {"kernel", "tiles"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_tiles_m16n8k8_full_second_pass_f32,
    {"ted-join",
     {{"mma", "m16n8k8"}, {"kernel", "tiles"}, {"pattern", "full"}, {"fill", "second-pass"}},
     scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_tiles_m8n8k4_f64,
                              {"ted-join", {{"mma", "m8n8k4"}, {"kernel", "tiles"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_tiles_m8n8k4_full_second_pass_f32,
    {"ted-join",
     {{"mma", "m8n8k4"}, {"kernel", "tiles"}, {"pattern", "full"}, {"fill", "second-pass"}},
     scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(ted_tiles_m16n8k8_second_pass_f64,
                              {"ted-join",
                               {{"mma", "m16n8k8"}, {"kernel", "tiles"}, {"fill", "second-pass"}}});
// Many tiny segments with the work queue: under lid-unicomp the fill falls back to full.
EPSJOIN_ENGINE_PROPERTY_TESTS(
    ted_segments_queue_f64,
    {"ted-join", {{"segment_ids", "64"}, {"chunk_ids", "16"}, {"queue", "on"}, {"sort", "off"}}});

epsjoin::neighbor_table run_csr(const epsjoin::dataset& pts, double eps, const std::string& engine,
                                std::map<std::string, std::string> params = {},
                                bool approximate = false, epsjoin::join_stats* stats = nullptr) {
  return epsjoin::test::self_join_csr(
      pts, eps, engine, {.params = std::move(params), .approximate = approximate, .stats = stats});
}

// A small case for compute-sanitizer (scripts/device-check.sh filters on the name).
TEST(gds_ted, sanitizer_case_small_joins_in_every_mode) {
  const auto pts = paper_expo(18, 1500);
  const double eps = 0.08;
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  ASSERT_GT(oracle.n_pairs(), pts.n());  // the case must hold pairs beside the self pairs
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> modes = {
      {"gds-join", {}},
      {"gds-join", {{"mode", "brute-force"}, {"queue", "on"}}},
      {"ted-join", {}},
      {"ted-join", {{"pattern", "full"}, {"fill", "second-pass"}, {"short_circuit", "on"}}},
      {"ted-join", {{"mode", "brute-force"}, {"segment_ids", "1000"}}},
      {"ted-join", {{"tile_cols", "32"}}},
      {"ted-join", {{"tile_cols", "32"}, {"pattern", "full"}, {"fill", "second-pass"}}},
      {"ted-join",
       {{"kernel", "gemm"}, {"mma", "m8n8k4"}, {"mode", "brute-force"}, {"fill", "second-pass"}}},
      {"ted-join", {{"mode", "brute-force"}, {"mma", "m16n8k8"}, {"fill", "second-pass"}}},
      {"ted-join", {{"mode", "brute-force"}, {"mma", "m8n8k4"}, {"pattern", "full"}}},
      {"ted-join", {{"mode", "brute-force"}, {"mma", "m16n8k4"}, {"fill", "second-pass"}}},
      {"ted-join", {{"mode", "brute-force"}, {"mma", "m16n8k16"}, {"fill", "second-pass"}}},
      {"ted-join", {{"mode", "brute-force"}, {"pattern", "full"}, {"segment_ids", "1000"}}},
  };
  for (const auto& [engine, params] : modes) {
    const auto table = run_csr(pts, eps, engine, params);
    EXPECT_EQ(table.offsets, oracle.offsets) << engine;
    EXPECT_TRUE(table.neighbors == oracle.neighbors) << engine;
  }
  // The tiles kernel's two-coordinate loads (d <= 16) with either instruction.
  const auto pts16 = paper_expo(16, 1500);
  const auto oracle16 = run_csr(pts16, eps, "brute-cpu");
  ASSERT_GT(oracle16.n_pairs(), pts16.n());
  for (const char* mma : {"m16n8k8", "m8n8k4"}) {
    for (const char* fill : {"second-pass", "records"}) {
      const auto table =
          run_csr(pts16, eps, "ted-join", {{"kernel", "tiles"}, {"mma", mma}, {"fill", fill}});
      EXPECT_EQ(table.offsets, oracle16.offsets) << mma << " " << fill;
      EXPECT_TRUE(table.neighbors == oracle16.neighbors) << mma << " " << fill;
    }
  }
}

// Pairs at distance eps (1 - 1e-13) and eps (1 + 1e-13) around points with coordinates near
// 1000, where the expanded formula's rounding error (~1e-10 here) dwarfs the margin: only the
// band's re-check with the direct formula gets them right, and it must get every one right.
TEST(ted_join, band_recheck_decides_pairs_just_inside_and_outside_eps) {
  for (const std::size_t d : {3, 8, 21, 40}) {
    const double eps = 0.01;
    const auto pts = epsjoin::test::pairs_around_eps(d, 400, eps, 1e-13, 999.0, 1001.0, 7 + d);
    const auto oracle = run_csr(pts, eps, "brute-cpu");
    epsjoin::join_stats stats;
    const auto table = run_csr(pts, eps, "ted-join", {}, false, &stats);
    EXPECT_EQ(table.offsets, oracle.offsets) << "d " << d;
    EXPECT_TRUE(table.neighbors == oracle.neighbors) << "d " << d;
    const auto gemm = run_csr(pts, eps, "ted-join", {{"mode", "brute-force"}});
    EXPECT_EQ(gemm.offsets, oracle.offsets) << "gemm, d " << d;
    EXPECT_TRUE(gemm.neighbors == oracle.neighbors) << "gemm, d " << d;
    // Approximate decisions may differ from the oracle's, but the counting and filling passes
    // must take the same ones, and each pair in both directions.
    const auto approximate = run_csr(pts, eps, "ted-join", {{"mode", "brute-force"}}, true);
    for (std::size_t i = 0; i + 1 < approximate.offsets.size(); ++i) {
      for (std::uint64_t e = approximate.offsets[i]; e < approximate.offsets[i + 1]; ++e) {
        const std::uint32_t j = approximate.neighbors[e];
        ASSERT_LT(j, pts.n());
        const auto begin = approximate.neighbors.begin() + approximate.offsets[j];
        const auto end = approximate.neighbors.begin() + approximate.offsets[j + 1];
        ASSERT_TRUE(std::binary_search(begin, end, static_cast<std::uint32_t>(i)))
            << "gemm approximate, d " << d << ": " << i << " -> " << j << " without " << j << " -> "
            << i;
      }
    }
    // The approximate mode decides the same pairs by the expanded formula alone and says how
    // many it got wrong.
    (void)run_csr(pts, eps, "ted-join", {}, true, &stats);
    bool reported = false;
    for (const auto& note : stats.notes) reported |= note.first == "accuracy";
    EXPECT_TRUE(reported) << "d " << d;
  }
}

// auto takes the GEMM kernel where nothing is indexed (and where the index leaves most pairs);
// kernel=gemm runs anywhere but refuses the tiles kernel's parameters.
TEST(ted_join, kernel_choice_follows_the_index) {
  // 2-D, eps a fiftieth of the spread: the grid leaves a sliver of the pairs.
  const auto pts = paper_expo(2, 3000);
  auto kernel_note = [&](std::map<std::string, std::string> params) {
    epsjoin::join_stats stats;
    (void)run_csr(pts, 0.002, "ted-join", std::move(params), false, &stats);
    for (const auto& [key, value] : stats.notes) {
      if (key == "kernel") return value.substr(0, value.find(':'));
    }
    return std::string("none");
  };
  EXPECT_EQ(kernel_note({}), "tiles");
  EXPECT_EQ(kernel_note({{"mode", "brute-force"}}), "gemm");
  EXPECT_EQ(kernel_note({{"mode", "brute-force"}, {"kernel", "tiles"}}), "tiles");
  EXPECT_EQ(kernel_note({{"mode", "brute-force"}, {"short_circuit", "on"}}), "tiles");
  EXPECT_EQ(kernel_note({{"kernel", "gemm"}}), "gemm");  // allowed: it ignores the index
  // eps a fifth of the spread: a grid of a few cells a dimension, which leaves most pairs (the
  // points crowd near the origin) as candidates.
  epsjoin::join_stats stats;
  (void)run_csr(pts, 0.04, "ted-join", {}, false, &stats);
  std::string kernel;
  for (const auto& [key, value] : stats.notes) {
    if (key == "kernel") kernel = value;
  }
  EXPECT_TRUE(kernel.starts_with("gemm") && kernel.find("the index left") != std::string::npos)
      << kernel;
  EXPECT_THROW(kernel_note({{"kernel", "gemm"}, {"mode", "brute-force"}, {"tile_cols", "32"}}),
               epsjoin::invalid_argument);
}

// |R| of every exact GPU engine, counts only, agrees with the oracle on 1e5 points.
TEST(gds_ted, result_sizes_agree_on_1e5_points) {
  for (const std::size_t d : {4, 16, 40}) {
    const auto pts = paper_expo(d, 100000);
    // The estimate is some pair's distance; nudged off it so no pair sits at eps, where the
    // engines' summation orders may round either way (DESIGN.md allows that band).
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 20) * (1 + 1e-9);
    auto count = [&](const std::string& engine, std::map<std::string, std::string> params = {}) {
      epsjoin::resources res;
      epsjoin::join_options opt;
      opt.eps = eps;
      opt.engine = engine;
      opt.params = std::move(params);
      epsjoin::count_sink sink;
      return epsjoin::self_join(res, pts.view(), opt, sink).pairs;
    };
    const std::uint64_t oracle = count(d <= 16 ? "brute-cpu" : "brute-gpu");
    EXPECT_EQ(count("lbjoin"), oracle) << "d " << d;
    EXPECT_EQ(count("gds-join"), oracle) << "d " << d;
    EXPECT_EQ(count("gds-join", {{"mode", "brute-force"}}), oracle) << "d " << d;
    EXPECT_EQ(count("ted-join"), oracle) << "d " << d;
    EXPECT_EQ(count("ted-join", {{"mode", "brute-force"}}), oracle) << "d " << d;
  }
}

class gds_ted_reference : public testing::TestWithParam<reference_case> {};

TEST_P(gds_ted_reference, csr_has_the_exact_result_size) {
  const auto c = GetParam();
  const auto pts = paper_expo(c.d, c.n);
  for (const char* engine : {"gds-join", "ted-join"}) {
    epsjoin::resources res;
    epsjoin::join_options opt;
    opt.eps = c.eps;
    opt.engine = engine;
    opt.include_self = true;
    epsjoin::csr_sink csr;
    epsjoin::self_join(res, pts.view(), opt, csr);
    EXPECT_EQ(csr.table().n_pairs(), c.with_self) << engine;
  }
}

// 8-D near S 50 and 16-D near S 50.
std::vector<reference_case> csr_cases() {
  const auto& all = epsjoin::test::reference_cases();
  return {all[4], all[6]};
}

INSTANTIATE_TEST_SUITE_P(gds_ted_table, gds_ted_reference, testing::ValuesIn(csr_cases()),
                         epsjoin::test::reference_case_name);

}  // namespace
