// The FP16 direct formula against the oracle: meta-1q (tensor cores) and gds-join's
// arithmetic=fp16|fp16-fp32 (CUDA cores), with FP32 and FP16 sums. Every shape of the property
// harness in each pattern and fill; pairs placed just inside and just outside eps (near the
// origin, near 1000, spread wide); columns with very different means, whose point copies the
// index reorders by variance (the FP16 engines translate each column by its own mean); the
// approximate mode stays inside the declared band; |R| on 1e5-point sets.
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
#include "tensor/fp16/direct_bound.hpp"

namespace {

using epsjoin::scalar_type;
using epsjoin::test::paper_expo;

EPSJOIN_ENGINE_PROPERTY_TESTS(meta1q_f64, {"meta-1q"});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta1q_half_sums_f64, {"meta-1q", {{"accumulate", "fp16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta1q_f32, {"meta-1q", {}, scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta1q_full_second_pass_f64,
                              {"meta-1q", {{"pattern", "full"}, {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta1q_half_sums_full_queue_f32,
                              {"meta-1q",
                               {{"accumulate", "fp16"}, {"pattern", "full"}, {"queue", "on"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta1q_brute_f64, {"meta-1q", {{"mode", "brute-force"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(meta1q_segments_f64,
                              {"meta-1q", {{"segment_ids", "64"}, {"chunk_ids", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_fp16_fp32_f64, {"gds-join", {{"arithmetic", "fp16-fp32"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_fp16_f64, {"gds-join", {{"arithmetic", "fp16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(gds_fp16_full_lanes1_f32,
                              {"gds-join",
                               {{"arithmetic", "fp16"}, {"pattern", "full"}, {"lanes", "1"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    gds_fp16_fp32_full_queue_lanes32_f64,
    {"gds-join",
     {{"arithmetic", "fp16-fp32"}, {"pattern", "full"}, {"queue", "on"}, {"lanes", "32"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(
    gds_fp16_fp32_brute_second_pass_f64,
    {"gds-join", {{"arithmetic", "fp16-fp32"}, {"mode", "brute-force"}, {"fill", "second-pass"}}});

epsjoin::neighbor_table run_csr(const epsjoin::dataset& pts, double eps, const std::string& engine,
                                std::map<std::string, std::string> params = {},
                                bool approximate = false, epsjoin::join_stats* stats = nullptr) {
  return epsjoin::test::self_join_csr(
      pts, eps, engine, {.params = std::move(params), .approximate = approximate, .stats = stats});
}

std::string note(const epsjoin::join_stats& stats, const std::string& key) {
  return epsjoin::test::note_of(stats, key);
}

struct variant {
  const char* engine;
  std::map<std::string, std::string> params;
};

const std::vector<variant>& variants() {
  static const std::vector<variant> all = {
      {"meta-1q", {}},
      {"meta-1q", {{"accumulate", "fp16"}}},
      {"gds-join", {{"arithmetic", "fp16-fp32"}}},
      {"gds-join", {{"arithmetic", "fp16"}}},
  };
  return all;
}

std::string describe(const variant& v) {
  std::string s = v.engine;
  for (const auto& [k, value] : v.params) s += " " + k + "=" + value;
  return s;
}

// A small case for compute-sanitizer (scripts/device-check.sh filters on the name).
TEST(meta_1q, sanitizer_case_small_joins_in_every_mode) {
  for (const std::size_t d : {16, 37}) {
    const auto pts = paper_expo(d, 1200);
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 20) * (1 + 1e-9);
    const auto oracle = run_csr(pts, eps, "brute-cpu");
    ASSERT_GT(oracle.n_pairs(), pts.n());
    for (const variant& v : variants()) {
      for (const auto& extra : std::vector<std::map<std::string, std::string>>{
               {}, {{"pattern", "full"}, {"fill", "second-pass"}}, {{"mode", "brute-force"}}}) {
        auto params = v.params;
        params.insert(extra.begin(), extra.end());
        const auto table = run_csr(pts, eps, v.engine, params);
        EXPECT_EQ(table.offsets, oracle.offsets) << describe(v) << ", d " << d;
        EXPECT_TRUE(table.neighbors == oracle.neighbors) << describe(v) << ", d " << d;
      }
    }
  }
}

// Pairs 1e-6 or 1e-3 of eps inside and outside it, below FP16's resolution: only the band's
// re-check gets them right, and it must get every one right, with either sum.
TEST(meta_1q, band_recheck_decides_pairs_just_inside_and_outside_eps) {
  struct placement {
    double lo, hi;
  };
  for (const std::size_t d : {3, 16, 37}) {
    for (const placement at :
         {placement{0.0, 1.0}, placement{999.0, 1001.0}, placement{-5e4, 5e4}}) {
      for (const double rel : {1e-6, 1e-3}) {
        const double eps = (at.hi - at.lo) * 0.01;
        const auto pts = epsjoin::test::pairs_around_eps(d, 300, eps, rel, at.lo, at.hi, 7 + d);
        const auto oracle = run_csr(pts, eps, "brute-cpu");
        for (const variant& v : variants()) {
          epsjoin::join_stats stats;
          const auto table = run_csr(pts, eps, v.engine, v.params, false, &stats);
          EXPECT_EQ(table.offsets, oracle.offsets)
              << describe(v) << ", d " << d << " at " << at.lo << " rel " << rel;
          EXPECT_TRUE(table.neighbors == oracle.neighbors) << describe(v) << ", d " << d;
          EXPECT_NE(note(stats, "accuracy").find("accuracy ratio"), std::string::npos);
        }
      }
    }
  }
}

// Column 0 sits near 1000 with a spread of 1, column 1 near 0 with a spread of 100: the index
// puts column 1 first. Translating column 1 by column 0's mean would overflow FP16 (the scale
// is set by the spread of 100); every FP16 engine must translate each column by its own.
TEST(meta_1q, columns_with_different_means_in_index_order) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> narrow(999.5, 1000.5), wide(-50.0, 50.0);
  std::vector<double> values;
  for (int i = 0; i < 3000; ++i) {
    values.push_back(narrow(rng));
    values.push_back(wide(rng));
    values.push_back(narrow(rng) - 500.0);
  }
  const epsjoin::dataset pts(values, 3);
  const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 20) * (1 + 1e-9);
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  std::vector<variant> all = variants();
  all.push_back({"meta-16q", {}});
  all.push_back({"meta-16q", {{"mode", "brute-force"}}});
  for (const variant& v : all) {
    const auto table = run_csr(pts, eps, v.engine, v.params);
    EXPECT_EQ(table.offsets, oracle.offsets) << describe(v);
    EXPECT_TRUE(table.neighbors == oracle.neighbors) << describe(v);
  }
}

// The scaling the engines choose on the device equals the host reference the tests compute the
// declared bands from: the same exponent, the same centre to FP64 rounding; over both sets of an
// A x B join; 0 for identical points.
TEST(meta_1q, device_scaling_matches_the_host_reference) {
  using epsjoin::detail::fp16::choose_half_scaling;
  using epsjoin::detail::fp16::snapshot_device_scaling;
  epsjoin::resources res;
  const auto a = paper_expo(5, 20000);
  std::vector<double> shifted;
  for (std::size_t i = 0; i < 3000; ++i)
    for (std::size_t k = 0; k < 5; ++k) shifted.push_back(1000.0 * k + a.view().at(i, k));
  const epsjoin::dataset b(shifted, 5);
  const epsjoin::dataset same(std::vector<double>(40, 3.5), 4);
  const std::vector<std::pair<epsjoin::dataset_view, epsjoin::dataset_view>> cases = {
      {a.view(), {}}, {b.view(), {}}, {a.view(), b.view()}, {same.view(), {}}};
  for (const auto& [first, second] : cases) {
    const auto host = choose_half_scaling(first, second, 2);
    const auto device = snapshot_device_scaling(res, first, second);
    EXPECT_EQ(device.exponent, host.exponent) << first.n << " + " << second.n << " points";
    ASSERT_EQ(device.center.size(), host.center.size());
    for (std::size_t k = 0; k < host.center.size(); ++k) {
      EXPECT_NEAR(device.center[k], host.center[k], 1e-12 * (1.0 + std::abs(host.center[k])));
    }
  }
  EXPECT_EQ(snapshot_device_scaling(res, same.view(), {}).exponent, 0);
}

// The approximate mode: whatever it decides differently from the oracle lies inside the band
// direct_bound.hpp declares for the pair, and both directions of every pair it reports are there.
TEST(meta_1q, approximate_mode_stays_inside_the_declared_band) {
  for (const std::size_t d : {5, 16, 40}) {
    const auto pts = paper_expo(d, 3000);
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 30);
    const auto oracle = run_csr(pts, eps, "brute-cpu");
    const auto scaling = epsjoin::detail::fp16::choose_half_scaling(pts.view(), {}, 1);
    for (const variant& v : variants()) {
      const bool half_sums =
          v.params.contains("accumulate") ||
          (v.params.contains("arithmetic") && v.params.at("arithmetic") == "fp16");
      const int exponent = half_sums
                               ? epsjoin::detail::fp16::cap_for_half_sums(scaling.exponent, eps)
                               : scaling.exponent;
      const double scale = std::ldexp(1.0, exponent);
      std::vector<double> norm(pts.n());
      for (std::size_t i = 0; i < pts.n(); ++i) {
        double n2 = 0;
        for (std::size_t k = 0; k < d; ++k) {
          const double x = (pts.view().at(i, k) - scaling.center[k]) * scale;
          n2 += x * x;
        }
        norm[i] = std::sqrt(n2);
      }
      const auto band =
          epsjoin::detail::fp16::direct_decision_band(static_cast<int>(d), half_sums, 0x1p-53);
      epsjoin::join_stats stats;
      const auto approx = run_csr(pts, eps, v.engine, v.params, true, &stats);
      ASSERT_EQ(approx.offsets.size(), oracle.offsets.size());
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
          double s = 0;
          for (std::size_t k = 0; k < d; ++k) {
            const double delta = pts.view().at(i, k) - pts.view().at(j, k);
            s += delta * delta;
          }
          s *= scale * scale;
          // Slack for the float rounding of the norms the kernels read.
          const auto th = epsjoin::detail::fp16::direct_thresholds_for(band, eps * scale,
                                                                       (norm[i] + norm[j]) * 1.001);
          EXPECT_TRUE(s > th.lo && s <= th.hi)
              << describe(v) << ", d " << d << ": pair " << i << ", " << j << " at scaled s " << s
              << " outside the band [" << th.lo << ", " << th.hi << "]";
        }
        for (const std::uint32_t j : got) {
          const auto begin = approx.neighbors.begin() + approx.offsets[j];
          const auto end = approx.neighbors.begin() + approx.offsets[j + 1];
          ASSERT_TRUE(std::binary_search(begin, end, static_cast<std::uint32_t>(i)))
              << describe(v) << ", d " << d << ": " << i << " -> " << j << " without " << j
              << " -> " << i;
        }
      }
      const std::string accuracy = note(stats, "accuracy");
      EXPECT_TRUE(accuracy.starts_with("approximate")) << accuracy;
      if (differing == 0) {
        EXPECT_NE(accuracy.find("accuracy ratio 1"), std::string::npos) << accuracy;
      }
    }
  }
}

// |R|, counts only, agrees with the oracle on 1e5 points.
TEST(meta_1q, result_sizes_agree_on_1e5_points) {
  for (const std::size_t d : {4, 16, 40}) {
    const auto pts = paper_expo(d, 100000);
    const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 20) * (1 + 1e-9);
    auto count = [&](const std::string& engine, std::map<std::string, std::string> params) {
      return epsjoin::test::self_join_count(pts, eps, engine, std::move(params));
    };
    const auto want = count(d <= 16 ? "brute-cpu" : "brute-gpu", {});
    for (const variant& v : variants()) {
      EXPECT_EQ(count(v.engine, v.params), want) << describe(v) << ", d " << d;
    }
  }
}

// The reports name the kernel and the sums; the wrong values are refused.
TEST(meta_1q, reports_and_refusals) {
  const auto pts = paper_expo(8, 2000);
  const double eps = epsjoin::test::eps_for_selectivity(pts.view(), pts.view(), 10) * (1 + 1e-9);
  epsjoin::join_stats stats;
  (void)run_csr(pts, eps, "meta-1q", {{"accumulate", "fp16"}}, false, &stats);
  EXPECT_NE(note(stats, "kernel").find("FP16 sums"), std::string::npos) << note(stats, "kernel");
  EXPECT_NE(note(stats, "band re-checks").find("FP16 error band"), std::string::npos);
  epsjoin::join_stats gds_stats;
  (void)run_csr(pts, eps, "gds-join", {{"arithmetic", "fp16-fp32"}}, false, &gds_stats);
  EXPECT_NE(note(gds_stats, "kernel").find("CUDA cores"), std::string::npos);
  EXPECT_THROW(run_csr(pts, eps, "meta-1q", {{"accumulate", "fp64"}}), epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, eps, "gds-join", {{"arithmetic", "fp8"}}), epsjoin::invalid_argument);
}

}  // namespace
