// meta-16q (FP16-FP32 tensor cores) against the oracle: every shape of the property harness with
// each kernel (tiles, gemm) in each pattern and fill, both precisions; pairs placed just inside and
// just outside eps where FP16 alone cannot tell them apart (near the origin, far from it, and
// spread over a wide range); the approximate mode's pairs stay inside the declared error band and
// the counting and filling passes agree on them; |R| on 1e5-point sets.
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
#include "tensor/fp16/half_bound.hpp"

namespace {

using epsjoin::scalar_type;
using epsjoin::test::paper_expo;

// Indexed by default: the tiles kernel, or the gemm kernel where the index prunes little.
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_f64, {"meta-16q"});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_f32, {"meta-16q", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_full_records_f64,
                              {"meta-16q", {{"pattern", "full"}, {"fill", "records"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_second_pass_f64, {"meta-16q", {{"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_full_second_pass_f32,
                              {"meta-16q",
                               {{"pattern", "full"}, {"fill", "second-pass"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_segments_f64,
                              {"meta-16q", {{"segment_ids", "64"}, {"chunk_ids", "16"}}});
// Each kernel by name. The tiles kernel, in every fill and pattern, and in brute force.
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_tiles_f64, {"meta-16q", {{"kernel", "tiles"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_tiles_full_second_pass_f32,
                              {"meta-16q",
                               {{"kernel", "tiles"}, {"pattern", "full"}, {"fill", "second-pass"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_tiles_full_records_f64,
                              {"meta-16q",
                               {{"kernel", "tiles"}, {"pattern", "full"}, {"fill", "records"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_tiles_second_pass_queue_f64,
                              {"meta-16q",
                               {{"kernel", "tiles"}, {"fill", "second-pass"}, {"queue", "on"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_tiles_brute_f32,
                              {"meta-16q",
                               {{"kernel", "tiles"}, {"mode", "brute-force"}},
                               scalar_type::f32});
// The gemm kernel: 64-row warp tiles wherever they fit (every shape here), and the 32-row ones;
// over an index too (it ignores the cells).
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_gemm_f64, {"meta-16q", {{"mode", "brute-force"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_gemm_full_records_f32,
                              {"meta-16q",
                               {{"mode", "brute-force"}, {"pattern", "full"}, {"fill", "records"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_gemm_second_pass_f64,
                              {"meta-16q", {{"kernel", "gemm"}, {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta16q_gemm_rows32_f64,
                              {"meta-16q", {{"mode", "brute-force"}, {"warp_rows", "32"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    meta16q_gemm_rows32_full_records_f32,
    {"meta-16q",
     {{"mode", "brute-force"}, {"warp_rows", "32"}, {"pattern", "full"}, {"fill", "records"}},
     scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    meta16q_gemm_rows32_second_pass_f64,
    {"meta-16q", {{"mode", "brute-force"}, {"warp_rows", "32"}, {"fill", "second-pass"}}});

epsjoin::neighbor_table run_csr(const epsjoin::dataset& pts, double eps, const std::string& engine,
                                std::map<std::string, std::string> params = {},
                                bool approximate = false, epsjoin::join_stats* stats = nullptr) {
  return epsjoin::test::self_join_csr(
      pts, eps, engine, {.params = std::move(params), .approximate = approximate, .stats = stats});
}

std::string note(const epsjoin::join_stats& stats, const std::string& key) {
  return epsjoin::test::note_of(stats, key);
}

// A small case for compute-sanitizer (scripts/device-check.sh filters on the name).
TEST(meta_16q, sanitizer_case_small_joins_in_every_mode) {
  for (const std::size_t d : {16, 37}) {
    const auto pts = paper_expo(d, 1500);
    // Nudged off a pair's distance so no pair sits at eps (DESIGN.md allows that band).
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 20) * (1 + 1e-9);
    const auto oracle = run_csr(pts, eps, "brute-cpu");
    ASSERT_GT(oracle.n_pairs(), pts.n());  // the case must hold pairs beside the self pairs
    const std::vector<std::map<std::string, std::string>> modes = {
        {},
        {{"kernel", "tiles"}, {"fill", "second-pass"}},
        {{"kernel", "tiles"}, {"pattern", "full"}, {"fill", "second-pass"}},
        {{"kernel", "tiles"}, {"pattern", "full"}, {"fill", "records"}},
        {{"mode", "brute-force"}, {"fill", "second-pass"}},
        {{"mode", "brute-force"}, {"pattern", "full"}, {"fill", "second-pass"}},
        {{"mode", "brute-force"}, {"pattern", "full"}, {"fill", "records"}},
        {{"mode", "brute-force"}, {"segment_ids", "1000"}},
        {{"mode", "brute-force"}, {"warp_rows", "32"}, {"fill", "second-pass"}},
        {{"mode", "brute-force"}, {"warp_rows", "32"}, {"pattern", "full"}, {"fill", "records"}},
    };
    for (const auto& params : modes) {
      const auto table = run_csr(pts, eps, "meta-16q", params);
      EXPECT_EQ(table.offsets, oracle.offsets) << "d " << d << ", " << params.size() << " params";
      EXPECT_TRUE(table.neighbors == oracle.neighbors) << "d " << d;
    }
  }
}

// FP16 keeps 11 bits: pairs 1e-6 or 1e-3 of eps inside and outside it are below its resolution
// (and coordinates near 1000 would lose everything below 0.5 without the translation). Only the
// band's re-check gets them right, and it must get every one right.
TEST(meta_16q, band_recheck_decides_pairs_just_inside_and_outside_eps) {
  struct placement {
    double lo, hi;
  };
  for (const std::size_t d : {3, 16, 21, 64}) {
    for (const placement at :
         {placement{0.0, 1.0}, placement{999.0, 1001.0}, placement{-5e4, 5e4}}) {
      for (const double rel : {1e-6, 1e-3}) {
        const double eps = (at.hi - at.lo) * 0.01;
        const auto pts = epsjoin::test::pairs_around_eps(d, 300, eps, rel, at.lo, at.hi, 11 + d);
        const auto oracle = run_csr(pts, eps, "brute-cpu");
        for (const char* kernel : {"tiles", "gemm"}) {
          epsjoin::join_stats stats;
          const auto table = run_csr(pts, eps, "meta-16q", {{"kernel", kernel}}, false, &stats);
          EXPECT_EQ(table.offsets, oracle.offsets)
              << kernel << ", d " << d << " at " << at.lo << " rel " << rel;
          EXPECT_TRUE(table.neighbors == oracle.neighbors) << kernel << ", d " << d;
          EXPECT_NE(note(stats, "band re-checks"), "") << "d " << d;
          EXPECT_NE(note(stats, "accuracy").find("accuracy ratio"), std::string::npos);
        }
      }
    }
  }
}

// The approximate mode (the papers'): whatever it decides differently from the oracle lies inside
// the band half_bound.hpp declares, and both directions of every pair it reports are there (the
// counting and filling passes take the same decisions).
TEST(meta_16q, approximate_mode_stays_inside_the_declared_band) {
  for (const std::size_t d : {5, 16, 40}) {
    const auto pts = paper_expo(d, 3000);
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 30);
    const auto oracle = run_csr(pts, eps, "brute-cpu");
    epsjoin::join_stats stats;
    const auto approx = run_csr(pts, eps, "meta-16q", {}, true, &stats);
    ASSERT_EQ(approx.offsets.size(), oracle.offsets.size());
    // The band with the largest norms of the data, in original units.
    const auto scaling = epsjoin::detail::fp16::choose_half_scaling(pts.view(), {}, 1);
    const double scale = scaling.scale();
    double most = 0;
    for (std::size_t i = 0; i < pts.n(); ++i) {
      double n2 = 0;
      for (std::size_t k = 0; k < d; ++k) {
        const double x = (pts.view().at(i, k) - scaling.center[k]) * scale;
        n2 += x * x;
      }
      most = std::max(most, std::sqrt(n2));
    }
    const auto band = epsjoin::detail::fp16::half_decision_band(static_cast<int>(d), 0x1p-53);
    // Squared norms of the FP16 values exceed the exact ones by at most (1 + 2^-11)^2.
    const auto th = epsjoin::detail::fp16::thresholds_for(band, eps * scale, 2 * most * 1.001,
                                                          2 * most * most * 1.01);
    auto distance2 = [&](std::size_t i, std::size_t j) {
      double s = 0;
      for (std::size_t k = 0; k < d; ++k) {
        const double diff = pts.view().at(i, k) - pts.view().at(j, k);
        s += diff * diff;
      }
      return s * scale * scale;
    };
    std::size_t differing = 0;
    for (std::size_t i = 0; i + 1 < oracle.offsets.size(); ++i) {
      const auto row = [&](const epsjoin::neighbor_table& t) {
        return std::vector<std::uint32_t>(t.neighbors.begin() + t.offsets[i],
                                          t.neighbors.begin() + t.offsets[i + 1]);
      };
      const auto want = row(oracle), got = row(approx);
      std::vector<std::uint32_t> diff;
      std::set_symmetric_difference(want.begin(), want.end(), got.begin(), got.end(),
                                    std::back_inserter(diff));
      for (const std::uint32_t j : diff) {
        ++differing;
        const double s = distance2(i, j);
        EXPECT_TRUE(s > th.lo && s <= th.hi)
            << "d " << d << ": pair " << i << ", " << j << " at scaled s " << s
            << " outside the band [" << th.lo << ", " << th.hi << "]";
      }
      for (const std::uint32_t j : got) {
        const auto begin = approx.neighbors.begin() + approx.offsets[j];
        const auto end = approx.neighbors.begin() + approx.offsets[j + 1];
        ASSERT_TRUE(std::binary_search(begin, end, static_cast<std::uint32_t>(i)))
            << "d " << d << ": " << i << " -> " << j << " without " << j << " -> " << i;
      }
    }
    const std::string accuracy = note(stats, "accuracy");
    EXPECT_TRUE(accuracy.starts_with("approximate")) << accuracy;
    if (differing == 0) {
      EXPECT_NE(accuracy.find("accuracy ratio 1"), std::string::npos) << accuracy;
    }
  }
}

// The exact mode's own report of how the FP16-FP32 decision alone would have fared, and the
// approximate mode's accuracy ratio, agree with what the approximate run really returns.
TEST(meta_16q, accuracy_ratio_matches_the_approximate_result) {
  const auto pts = paper_expo(16, 4000);
  // Nudged off a pair's distance: the oracle and the engine's direct formula may round a pair at
  // eps either way (DESIGN.md), and the ratio is compared to the oracle's pairs.
  const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 50) * (1 + 1e-9);
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  epsjoin::join_stats stats;
  const auto approx = run_csr(pts, eps, "meta-16q", {}, true, &stats);
  std::uint64_t right = 0;
  for (std::size_t i = 0; i + 1 < oracle.offsets.size(); ++i) {
    std::vector<std::uint32_t> both;
    std::set_intersection(oracle.neighbors.begin() + oracle.offsets[i],
                          oracle.neighbors.begin() + oracle.offsets[i + 1],
                          approx.neighbors.begin() + approx.offsets[i],
                          approx.neighbors.begin() + approx.offsets[i + 1],
                          std::back_inserter(both));
    right += both.size();
  }
  const std::uint64_t exact_pairs = oracle.n_pairs();  // no self pairs in either table
  const double ratio = static_cast<double>(right) / static_cast<double>(exact_pairs);
  const std::string reported = note(stats, "accuracy");
  const auto at = reported.find("accuracy ratio ");
  ASSERT_NE(at, std::string::npos) << reported;
  EXPECT_NEAR(std::stod(reported.substr(at + 15)), ratio, 1e-5) << reported;
}

// |R|, counts only, agrees with the oracle on 1e5 points.
TEST(meta_16q, result_sizes_agree_on_1e5_points) {
  for (const std::size_t d : {4, 16, 40}) {
    const auto pts = paper_expo(d, 100000);
    // Nudged off a pair's distance so no pair sits at eps (DESIGN.md allows that band).
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 20) * (1 + 1e-9);
    auto count = [&](const std::string& engine) {
      return epsjoin::test::self_join_count(pts, eps, engine);
    };
    EXPECT_EQ(count("meta-16q"), count(d <= 16 ? "brute-cpu" : "brute-gpu")) << "d " << d;
  }
}

}  // namespace

namespace {

// auto takes the tiles kernel where the index prunes, gemm where it does not; the refusals.
TEST(meta_16q, kernel_choice_and_refusals) {
  const auto pts = paper_expo(2, 3000);
  auto kernel_note = [&](double eps, std::map<std::string, std::string> params) {
    epsjoin::join_stats stats;
    (void)run_csr(pts, eps, "meta-16q", std::move(params), false, &stats);
    const std::string kernel = note(stats, "kernel");
    return kernel.substr(0, kernel.find(':'));
  };
  EXPECT_EQ(kernel_note(0.002, {}), "tiles");
  EXPECT_EQ(kernel_note(0.002, {{"mode", "brute-force"}}), "gemm");
  EXPECT_EQ(kernel_note(0.002, {{"mode", "brute-force"}, {"kernel", "tiles"}}), "tiles");
  EXPECT_EQ(kernel_note(0.002, {{"kernel", "gemm"}}), "gemm");
  EXPECT_EQ(kernel_note(0.002, {{"index_dims", "1"}}), "tiles");
  // FP16 accumulation cancels catastrophically (tests/unit/test_half_bound.cpp): refused.
  EXPECT_THROW(kernel_note(0.002, {{"accumulate", "fp16"}}), epsjoin::invalid_argument);
  EXPECT_THROW(kernel_note(0.002, {{"kernel", "tiles"}, {"warp_rows", "32"}}),
               epsjoin::invalid_argument);
}

}  // namespace

namespace {

// Past 768 dimensions 128 queries no longer fit an H100 block's shared memory: the gemm kernel
// takes 32-row warp tiles (64 queries) there, and warp_rows=64 is refused with the limits.
TEST(meta_16q, wide_points_take_the_smaller_tiles) {
  const auto pts = paper_expo(800, 300);
  const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 10) * (1 + 1e-9);
  epsjoin::join_stats stats;
  const auto table = run_csr(pts, eps, "meta-16q", {{"mode", "brute-force"}}, false, &stats);
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  EXPECT_EQ(table.offsets, oracle.offsets);
  EXPECT_TRUE(table.neighbors == oracle.neighbors);
  EXPECT_NE(note(stats, "kernel").find("32 x 32 warp tiles"), std::string::npos)
      << note(stats, "kernel");
  EXPECT_THROW(run_csr(pts, eps, "meta-16q", {{"mode", "brute-force"}, {"warp_rows", "64"}}),
               epsjoin::invalid_argument);
  // The tiles kernel has no such limit.
  const auto tiles = run_csr(pts, eps, "meta-16q", {{"mode", "brute-force"}, {"kernel", "tiles"}});
  EXPECT_EQ(tiles.offsets, oracle.offsets);
  EXPECT_TRUE(tiles.neighbors == oracle.neighbors);
}

}  // namespace
