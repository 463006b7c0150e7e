// hegjoin against the oracle: every partition strategy over the property harness's shapes, with
// both patterns (LID-UNICOMP, the default, where each side writes both rows of its pairs, and
// FULL), degenerate splits (everything to one side, more CPU workers than queries, one-query
// chunks, many tiny GPU batches), segmented fills (under LID-UNICOMP: the re-run with FULL), both
// precisions; errors for settings that cannot work; the shares reported adding up; many small
// joins at once from several threads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "support/harness.hpp"
#include "support/paper_data.hpp"
#include "support/temp_dir.hpp"

namespace {

using epsjoin::scalar_type;
using epsjoin::test::paper_expo;

EPSJOIN_ENGINE_PROPERTY_TESTS(heg_dynamic_f64, {"hegjoin"});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_dynamic_f32, {"hegjoin", {}, scalar_type::f32});
// Small GPU batches and one-query CPU chunks: the two ends meet somewhere in the middle.
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_dynamic_tiny_batches_f64,
                              {"hegjoin",
                               {{"batch_items", "1"}, {"gpu_batches", "1000"},
                                {"cpu_chunk", "1"}, {"cpu_threads", "3"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_dynamic_stage8_f64,
                              {"hegjoin", {{"stage_dims", "8"}, {"batch_items", "16"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_dynamic_segments_f64,
                              {"hegjoin",
                               {{"segment_ids", "64"}, {"chunk_ids", "16"}, {"batch_items", "8"},
                                {"fill", "second-pass"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_dynamic_records_unsorted_f64,
                              {"hegjoin", {{"fill", "records"}, {"sort", "off"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_gpu_only_f64, {"hegjoin", {{"cpu_threads", "0"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_full_pattern_f64, {"hegjoin", {{"pattern", "full"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_full_pattern_tiny_batches_f32,
                              {"hegjoin",
                               {{"pattern", "full"}, {"batch_items", "1"}, {"gpu_batches", "1000"},
                                {"cpu_chunk", "1"}, {"cpu_threads", "3"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_full_pattern_segments_f64,
                              {"hegjoin",
                               {{"pattern", "full"}, {"segment_ids", "64"}, {"chunk_ids", "16"},
                                {"batch_items", "8"}}});
// Workers that never leave the rest to the GPU (cpu_yield=off), with many small takes on both sides.
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_no_yield_tiny_batches_f64,
                              {"hegjoin",
                               {{"cpu_yield", "off"}, {"batch_items", "1"}, {"gpu_batches", "1000"},
                                {"cpu_chunk", "1"}, {"cpu_threads", "3"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_more_workers_than_queries_f64,
                              {"hegjoin", {{"cpu_threads", "64"}, {"cpu_chunk", "1"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_static_queries_half_f64,
                              {"hegjoin", {{"partition", "static-queries"}, {"gpu_fraction", "0.5"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_static_candidates_f32,
                              {"hegjoin",
                               {{"partition", "static-candidates"}, {"gpu_fraction", "0.3"},
                                {"batch_items", "4"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_static_all_cpu_f64,
                              {"hegjoin", {{"partition", "static-candidates"}, {"gpu_fraction", "0"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_static_all_gpu_f64,
                              {"hegjoin", {{"partition", "static-queries"}, {"gpu_fraction", "1"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_static_model_f64,
                              {"hegjoin",
                               {{"partition", "static-candidates"}, {"ref_eps", "0.01"},
                                {"ref_gpu_seconds", "0.001"}, {"ref_cpu_seconds", "0.004"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_static_calibrated_f64,
                              {"hegjoin", {{"partition", "static-queries"}, {"cpu_threads", "2"}}});
// The super-ego CPU side (full rows, its own EGO index).
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_super_ego_f64, {"hegjoin", {{"cpu_engine", "super-ego"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_super_ego_static_half_f64,
                              {"hegjoin",
                               {{"cpu_engine", "super-ego"}, {"partition", "static-queries"},
                                {"gpu_fraction", "0.5"}}});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_super_ego_all_cpu_f32,
                              {"hegjoin",
                               {{"cpu_engine", "super-ego"}, {"partition", "static-candidates"},
                                {"gpu_fraction", "0"}},
                               scalar_type::f32});
EPSJOIN_ENGINE_PROPERTY_TESTS(heg_super_ego_tiny_parts_f64,
                              {"hegjoin",
                               {{"cpu_engine", "super-ego"}, {"batch_items", "1"},
                                {"gpu_batches", "1000"}, {"cpu_chunk", "1"}, {"cpu_threads", "3"},
                                {"ego_leaf", "4"}, {"ego_query_leaf", "1"}}});

epsjoin::neighbor_table run_csr(const epsjoin::dataset& pts, double eps, const std::string& engine,
                                std::map<std::string, std::string> params = {},
                                epsjoin::join_stats* stats = nullptr, unsigned threads = 0) {
  return epsjoin::test::self_join_csr(pts, eps, engine,
                                      {.params = std::move(params),
                                       .include_self = true,
                                       .threads = threads,
                                       .stats = stats});
}

std::string note(const epsjoin::join_stats& stats, const std::string& key) {
  for (const auto& [k, v] : stats.notes) {
    if (k == key) return v;
  }
  ADD_FAILURE() << "no note '" << key << "'";
  return {};
}

/// Checks a hegjoin table against the oracle's, and that both sides' candidates add up to the
/// join's; returns the CPU's.
std::uint64_t check_shares(const epsjoin::neighbor_table& table,
                           const epsjoin::neighbor_table& oracle,
                           const epsjoin::join_stats& stats) {
  EXPECT_EQ(table.offsets, oracle.offsets);
  EXPECT_TRUE(table.neighbors == oracle.neighbors);
  const std::uint64_t gpu = std::stoull(note(stats, "gpu candidates"));
  const std::uint64_t cpu = std::stoull(note(stats, "cpu candidates"));
  EXPECT_EQ(gpu + cpu, stats.candidates);
  return cpu;
}

// A small case for compute-sanitizer (scripts/device-check.sh filters on the name).
TEST(hegjoin, sanitizer_case_small_joins_in_every_partition) {
  const auto pts = paper_expo(4, 3000);
  const double eps = 0.02;
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  ASSERT_GT(oracle.n_pairs(), 2 * pts.n());
  const std::vector<std::map<std::string, std::string>> modes = {
      {{"batch_items", "64"}, {"cpu_chunk", "16"}},
      {{"partition", "static-queries"}, {"gpu_fraction", "0.4"}, {"fill", "second-pass"}},
      {{"partition", "static-candidates"}, {"gpu_fraction", "0.6"}, {"segment_ids", "500"}},
      {{"partition", "static-queries"}, {"gpu_fraction", "0.5"}, {"cpu_engine", "super-ego"}},
  };
  for (const auto& params : modes) {
    const auto table = run_csr(pts, eps, "hegjoin", params);
    EXPECT_EQ(table.offsets, oracle.offsets);
    EXPECT_TRUE(table.neighbors == oracle.neighbors);
  }
}

// Under dynamic partitioning the GPU starts before the items reach the host; whatever each side
// took, the two shares still add up to the join's candidates.
TEST(hegjoin, dynamic_shares_add_up_to_the_join) {
  const auto pts = paper_expo(4, 60000);
  const double eps = 0.02;
  const auto oracle = run_csr(pts, eps, "lbjoin", {{"pattern", "full"}});
  const std::vector<std::map<std::string, std::string>> modes = {
      {},
      {{"batch_items", "1"}, {"gpu_batches", "2000"}, {"cpu_chunk", "1"}},
      {{"batch_items", "1"}, {"gpu_batches", "2000"}, {"cpu_engine", "super-ego"}},
      {{"batch_items", "1"}, {"gpu_batches", "2000"}, {"segment_ids", "20000"},
       {"pattern", "full"}},
  };
  for (const auto& params : modes) {
    epsjoin::join_stats stats;
    const auto table = run_csr(pts, eps, "hegjoin", params, &stats, 4);
    check_shares(table, oracle, stats);
  }
}

// The two sides' shares cover every candidate once, and a fixed split gives each side its part.
TEST(hegjoin, shares_add_up_to_the_join) {
  const auto pts = paper_expo(6, 60000);
  const double eps = 0.02;
  const auto oracle = run_csr(pts, eps, "lbjoin", {{"pattern", "full"}});
  for (const char* fraction : {"0", "0.5", "1"}) {
    epsjoin::join_stats stats;
    const auto table = run_csr(pts, eps, "hegjoin",
                               {{"partition", "static-candidates"}, {"gpu_fraction", fraction}},
                               &stats, 4);
    SCOPED_TRACE(fraction);
    const std::uint64_t cpu = check_shares(table, oracle, stats);
    const std::uint64_t gpu = stats.candidates - cpu;
    if (std::string(fraction) == "0") {
      EXPECT_EQ(gpu, 0u);
    }
    if (std::string(fraction) == "1") {
      EXPECT_EQ(cpu, 0u);
    }
    if (std::string(fraction) == "0.5") {
      EXPECT_GT(gpu, 0u);
      EXPECT_GT(cpu, 0u);
    }
    const double imbalance = std::stod(note(stats, "load imbalance"));
    EXPECT_GE(imbalance, 0.0);
    EXPECT_LE(imbalance, 1.0);
  }
}

TEST(hegjoin, rejects_settings_that_cannot_work) {
  const auto pts = paper_expo(3, 500);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"pattern", "half"}}), epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"queue", "on"}}), epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"kernel", "query"}}), epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"gpu_fraction", "0.5"}}),
               epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"partition", "static-queries"}, {"gpu_fraction", "1.5"}}),
               epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin",
                       {{"partition", "static-queries"}, {"gpu_fraction", "0.5"},
                        {"cpu_threads", "0"}}),
               epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin",
                       {{"partition", "static-queries"}, {"ref_gpu_seconds", "1"}}),
               epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"partition", "balanced"}}),
               epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"cpu_engine", "ego"}}), epsjoin::invalid_argument);
  EXPECT_THROW(
      run_csr(pts, 0.05, "hegjoin", {{"cpu_engine", "super-ego"}, {"pattern", "lid-unicomp"}}),
      epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"ego_leaf", "4"}}), epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin", {{"cpu_yield", "sometimes"}}),
               epsjoin::invalid_argument);
  EXPECT_THROW(run_csr(pts, 0.05, "hegjoin",
                       {{"partition", "static-queries"}, {"gpu_fraction", "0.5"},
                        {"cpu_yield", "off"}}),
               epsjoin::invalid_argument);
}

// The super-ego side takes its share of a static split, builds its index once, and its share of
// the candidates (the deque's measure) and the GPU's add up to the join's.
TEST(hegjoin, super_ego_side_shares_a_split) {
  const auto pts = paper_expo(4, 40000);
  const double eps = 0.01;
  const auto oracle = run_csr(pts, eps, "lbjoin", {{"pattern", "full"}});
  for (const char* fraction : {"0", "0.5"}) {
    epsjoin::join_stats stats;
    const auto table = run_csr(pts, eps, "hegjoin",
                               {{"partition", "static-candidates"}, {"gpu_fraction", fraction},
                                {"cpu_engine", "super-ego"}},
                               &stats, 4);
    SCOPED_TRACE(fraction);
    EXPECT_GT(check_shares(table, oracle, stats), 0u);
    EXPECT_EQ(note(stats, "cpu engine").rfind("super-ego (leaf 128", 0), 0u)
        << note(stats, "cpu engine");
  }
}

// Under LID-UNICOMP both sides write into rows of the other's queries; a row's GPU part comes
// first, then the CPU's. Both fills, the CSR and count sinks, and splits where each side has work.
TEST(hegjoin, halving_rows_have_both_sides_parts) {
  const auto pts = paper_expo(3, 20000);
  const double eps = 0.03;
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  ASSERT_GT(oracle.n_pairs(), 10 * pts.n());
  for (const char* fill : {"records", "second-pass"}) {
    for (const char* fraction : {"0.3", "0.7"}) {
      epsjoin::join_stats stats;
      const auto table = run_csr(pts, eps, "hegjoin",
                                 {{"partition", "static-queries"},
                                  {"gpu_fraction", fraction},
                                  {"fill", fill},
                                  {"cpu_threads", "3"}},
                                 &stats, 4);
      EXPECT_EQ(table.offsets, oracle.offsets) << fill << " " << fraction;
      EXPECT_TRUE(table.neighbors == oracle.neighbors) << fill << " " << fraction;
      EXPECT_NE(note(stats, "configuration").find("pattern lid-unicomp"), std::string::npos);
      const std::uint64_t cpu = std::stoull(note(stats, "cpu candidates"));
      const std::uint64_t gpu = std::stoull(note(stats, "gpu candidates"));
      EXPECT_GT(cpu, 0u);
      EXPECT_GT(gpu, 0u);
      EXPECT_EQ(cpu + gpu, stats.candidates);
    }
  }
  const std::uint64_t counted = epsjoin::test::self_join_count(
      pts, eps, "hegjoin", {{"partition", "static-queries"}, {"gpu_fraction", "0.5"}});
  EXPECT_EQ(counted, oracle.n_pairs() - pts.n());
}

// A GPU part that needs several device segments cannot be filled by halving: the join is run
// again with the FULL pattern, and says so.
TEST(hegjoin, halving_reruns_with_full_when_rows_need_segments) {
  const auto pts = paper_expo(4, 5000);
  const double eps = 0.03;
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  epsjoin::join_stats stats;
  const auto table = run_csr(pts, eps, "hegjoin", {{"segment_ids", "1000"}}, &stats, 4);
  EXPECT_EQ(table.offsets, oracle.offsets);
  EXPECT_TRUE(table.neighbors == oracle.neighbors);
  EXPECT_NE(note(stats, "pattern").find("re-run with full"), std::string::npos);
  EXPECT_NE(note(stats, "configuration").find("pattern full (re-run with full)"),
            std::string::npos);
}

// The static partitions' calibration is kept in a file: a second process (here: the same data at
// another address, which this process's own cache does not know) reads it instead of measuring.
TEST(hegjoin, calibrations_are_kept_on_disk) {
  const auto pts = paper_expo(3, 20000);
  const auto same = pts, again = pts;
  const double eps = 0.01;
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  const std::string file = epsjoin::test::temp_path("calibration.txt");
  std::map<std::string, std::string> params = {
      {"partition", "static-queries"}, {"cpu_threads", "2"}, {"calibration_cache", file}};
  epsjoin::join_stats first, second, off;
  EXPECT_TRUE(run_csr(pts, eps, "hegjoin", params, &first).neighbors == oracle.neighbors);
  EXPECT_EQ(note(first, "calibration"), "measured, kept in " + file);
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_TRUE(run_csr(same, eps, "hegjoin", params, &second).neighbors == oracle.neighbors);
  EXPECT_EQ(note(second, "calibration"), "read from " + file);
  EXPECT_EQ(note(first, "partition"), note(second, "partition")) << "the same model, the same split";
  params["calibration_cache"] = "off";
  EXPECT_TRUE(run_csr(again, eps, "hegjoin", params, &off).neighbors == oracle.neighbors);
  EXPECT_EQ(note(off, "calibration"), "measured (calibration_cache=off)");
  std::filesystem::remove(file);
}

// Many small hegjoin jobs at once, each with its own resources: every one must match.
TEST(hegjoin, concurrent_small_joins_all_match) {
  const auto pts = paper_expo(2, 4000);
  const double eps = 0.003;
  const auto oracle = run_csr(pts, eps, "brute-cpu");
  std::atomic<int> mismatches{0};
  std::vector<std::thread> jobs;
  for (int t = 0; t < 4; ++t) {
    jobs.emplace_back([&, t] {
      for (int k = 0; k < 4; ++k) {
        const auto table =
            run_csr(pts, eps, "hegjoin",
                    {{"batch_items", "32"}, {"cpu_chunk", std::to_string(1 + 7 * k)}}, nullptr,
                    static_cast<unsigned>(2 + t));
        if (table.offsets != oracle.offsets || !(table.neighbors == oracle.neighbors)) ++mismatches;
      }
    });
  }
  for (std::thread& j : jobs) j.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
