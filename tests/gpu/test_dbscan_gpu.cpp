// DBSCAN on every GPU, tensor-core and CPU+GPU engine: each must give exactly the labels of the
// brute-force engine (the border and numbering rules leave no freedom), which
// tests/oracle/test_dbscan_oracle.cpp checks against an independent brute-force DBSCAN. The
// row-filling engines merge on the device (their fill kernels link each pair into a union-find
// there, and the labels are made there); the others, and every engine with device_merge off,
// merge pairs on the host.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "epsjoin/dbscan.hpp"
#include "epsjoin/join.hpp"
#include "support/device_points.hpp"
#include "support/gpu_engines.hpp"
#include "support/paper_data.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace {

using namespace epsjoin;

using test::device_engines;

// The engines that link their pairs on the device (engine::takes_device_links).
bool merges_on_device(const std::string& engine) {
  for (const char* name : {"lbjoin", "gds-join", "ted-join", "meta-16q", "meta-1q"}) {
    if (engine == name) return true;
  }
  return false;
}

struct run_options {
  bool device_merge = true;
  scalar_type precision = scalar_type::f64;
  std::map<std::string, std::string> params;
};

run_options host_merge() {
  run_options how;
  how.device_merge = false;
  return how;
}

dbscan_result cluster(const std::string& engine, const dataset& points, double eps,
                      std::size_t min_samples, const run_options& how = {}) {
  resources res;
  dbscan_options opt;
  opt.engine = engine;
  opt.device_merge = how.device_merge;
  opt.precision = how.precision;
  opt.params = how.params;
  dbscan_result r = dbscan(res, points, eps, min_samples, opt);
  // The path taken is the one promised: a test of the device merge that ran on the host
  // would test nothing.
  if (points.n() > 0 && !(engine == "cpu-grid" && r.merge == "cells")) {
    // cpu-grid clusters on its cells where it can (1-3 dimensions; dbscan_options::cell_merge),
    // which the CPU oracle tests check; elsewhere the merge is the one asked for.
    EXPECT_EQ(r.merge, how.device_merge && merges_on_device(engine) ? "device" : "host") << engine;
  }
  return r;
}

void expect_same(const dbscan_result& expected, const dbscan_result& actual) {
  ASSERT_EQ(expected.labels.size(), actual.labels.size());
  ASSERT_EQ(expected.core.size(), actual.core.size());
  for (std::size_t i = 0; i < expected.labels.size(); ++i) {
    ASSERT_EQ(expected.core[i], actual.core[i]) << "point " << i;
    ASSERT_EQ(expected.labels[i], actual.labels[i]) << "point " << i;
  }
  EXPECT_EQ(expected.n_clusters, actual.n_clusters);
  EXPECT_EQ(expected.n_core, actual.n_core);
  EXPECT_EQ(expected.n_border, actual.n_border);
  EXPECT_EQ(expected.n_noise, actual.n_noise);
  // The cells path stops counting a point's neighbours early: it reports no pair count.
  if (expected.merge != "cells" && actual.merge != "cells") {
    EXPECT_EQ(expected.pairs, actual.pairs);
  }
}

std::vector<std::string> device_merging_engines() {
  std::vector<std::string> names;
  for (const std::string& e : device_engines()) {
    if (merges_on_device(e)) names.push_back(e);
  }
  return names;
}

TEST(dbscan_gpu, every_device_engine_matches_brute_force) {
  const std::vector<std::string> names = device_engines();
  ASSERT_FALSE(names.empty()) << "a device is present but no GPU engine is available";
  using k = test::shape_kind;
  for (k kind : {k::uniform, k::clusters, k::skewed}) {
    for (std::size_t d : {2, 3, 8, 16}) {
      const dataset points = test::make_shape(kind, 3000, d, test::test_seed());
      // Clear of every pair distance by far more than any exact engine's rounding.
      const double eps = test::eps_clear_of_pairs(
          points.view(), test::eps_for_selectivity(points.view(), points.view(), 15), 1e-9);
      for (std::size_t min_samples : {1, 5, 20}) {
        const dbscan_result expected = cluster("brute-cpu", points, eps, min_samples);
        for (const std::string& engine : names) {
          SCOPED_TRACE(testing::Message() << engine << " " << test::to_string(kind) << " d=" << d
                                          << " min_samples=" << min_samples);
          expect_same(expected, cluster(engine, points, eps, min_samples));
        }
      }
    }
  }
}

TEST(dbscan_gpu, ties_at_exactly_eps) {
  const dataset points = test::make_shape(test::shape_kind::lattice, 2000, 2, test::test_seed());
  const dbscan_result expected = cluster("brute-cpu", points, 0.25, 5);
  for (const std::string& engine : device_engines()) {
    SCOPED_TRACE(engine);
    expect_same(expected, cluster(engine, points, 0.25, 5));
  }
}

// A million points: the GPU engines deliver pairs in batches of millions, which the merge sink
// splits over the CPU threads.
TEST(dbscan_gpu, a_million_points_as_cpu_grid) {
  const dataset points = test::paper_expo(2, 1000000);
  const dbscan_result expected = cluster("cpu-grid", points, 0.0002, 10);
  EXPECT_GT(expected.n_clusters, 100u);
  for (const char* engine : {"gpu-sj", "lbjoin", "hegjoin"}) {
    SCOPED_TRACE(engine);
    expect_same(expected, cluster(engine, points, 0.0002, 10));
  }
}

// The device merge against brute-cpu and against the same engine's host merge, on the cases
// where a union-find or a labelling goes wrong first.
TEST(dbscan_gpu, device_merge_on_degenerate_inputs) {
  const std::vector<std::string> names = device_merging_engines();
  ASSERT_FALSE(names.empty());
  const dataset lattice = test::make_shape(test::shape_kind::lattice, 1500, 3, test::test_seed());
  std::vector<double> same(600 * 2, 0.375);
  const dataset identical(std::move(same), 2);
  const dataset one(std::vector<double>{0.5, 0.5}, 2);
  const dataset none(0, 2);
  const dataset dupes = test::make_shape(test::shape_kind::duplicates, 2000, 4, test::test_seed());
  struct case_t {
    const char* name;
    const dataset& points;
    double eps;
    std::size_t min_samples;
  };
  const case_t cases[] = {
      {"lattice ties, min_samples 7 (exactly the 3-D neighbours and self)", lattice, 0.25, 7},
      {"lattice ties, min_samples 8", lattice, 0.25, 8},
      {"lattice, min_samples 1", lattice, 0.25, 1},
      {"lattice, eps covering everything", lattice, 100.0, 3},
      {"all identical points", identical, 0.01, 5},
      {"all identical points, min_samples above n", identical, 0.01, 601},
      {"duplicates", dupes, 0.05, 10},
      {"one point", one, 0.1, 1},
      {"one point, noise", one, 0.1, 2},
      {"no points", none, 0.1, 3},
  };
  for (const case_t& c : cases) {
    const dbscan_result expected = cluster("brute-cpu", c.points, c.eps, c.min_samples);
    for (const std::string& engine : names) {
      SCOPED_TRACE(testing::Message() << engine << ": " << c.name);
      expect_same(expected, cluster(engine, c.points, c.eps, c.min_samples));
      expect_same(expected, cluster(engine, c.points, c.eps, c.min_samples, host_merge()));
    }
  }
}

TEST(dbscan_gpu, device_merge_in_float32) {
  for (std::size_t d : {2, 5}) {
    const dataset points = dataset::to_f32(
        test::make_shape(test::shape_kind::clusters, 4000, d, test::test_seed()).view());
    const double eps = test::eps_clear_of_pairs(
        points.view(), test::eps_for_selectivity(points.view(), points.view(), 20), 1e-5);
    run_options f32;
    f32.precision = scalar_type::f32;
    const dbscan_result expected = cluster("brute-cpu", points, eps, 8, f32);
    for (const std::string& engine : device_merging_engines()) {
      SCOPED_TRACE(testing::Message() << engine << " d=" << d);
      expect_same(expected, cluster(engine, points, eps, 8, f32));
    }
  }
}

// One small case per engine and pattern: LID-UNICOMP links both directions of each pair it
// computes, FULL each row's own; sized for compute-sanitizer's memcheck and racecheck.
TEST(dbscan_gpu, device_merge_small) {
  const dataset points = test::make_shape(test::shape_kind::clusters, 1200, 2, test::test_seed());
  const double eps = test::eps_clear_of_pairs(
      points.view(), test::eps_for_selectivity(points.view(), points.view(), 12), 1e-9);
  const dbscan_result expected = cluster("brute-cpu", points, eps, 6);
  for (const std::string& engine : device_merging_engines()) {
    for (const char* pattern : {"lid-unicomp", "full"}) {
      SCOPED_TRACE(testing::Message() << engine << " pattern=" << pattern);
      run_options how;
      how.params = {{"pattern", pattern}};
      expect_same(expected, cluster(engine, points, eps, 6, how));
    }
  }
}

// The settings that change how the rows would be written change nothing a linking fill does:
// a segment far smaller than the rows, the fill from recorded hits, the work queue.
TEST(dbscan_gpu, device_merge_ignores_the_row_settings) {
  const dataset points = test::make_shape(test::shape_kind::skewed, 20000, 3, test::test_seed());
  const double eps = test::eps_clear_of_pairs(
      points.view(), test::eps_for_selectivity(points.view(), points.view(), 40), 1e-9);
  const dbscan_result expected = cluster("cpu-grid", points, eps, 12);
  for (const std::string& engine : device_merging_engines()) {
    for (const char* pattern : {"lid-unicomp", "full"}) {
      SCOPED_TRACE(testing::Message() << engine << " pattern=" << pattern);
      run_options small;
      small.params = {{"segment_ids", "5000"}, {"pattern", pattern}};
      expect_same(expected, cluster(engine, points, eps, 12, small));
    }
  }
  for (const char* fill : {"records", "second-pass"}) {
    for (const char* queue : {"on", "off"}) {
      SCOPED_TRACE(testing::Message() << "fill=" << fill << " queue=" << queue);
      run_options how;
      how.params = {{"fill", fill}, {"queue", queue}};
      expect_same(expected, cluster("lbjoin", points, eps, 12, how));
    }
  }
}

// One `resources` for calls of several sizes, as Python's estimator keeps one: the per-point
// arrays it keeps from a smaller call grow for a larger one and are reused by the next, and
// nothing of an earlier call leaks into a later one's labels.
TEST(dbscan_gpu, device_merge_on_one_resources) {
  resources res;
  dbscan_options opt;
  opt.engine = "lbjoin";
  using k = test::shape_kind;
  for (const auto& [kind, n, min_samples] :
       {std::tuple{k::clusters, 3000, 5}, std::tuple{k::uniform, 800, 3},
        std::tuple{k::skewed, 12000, 10}, std::tuple{k::clusters, 3000, 5},
        std::tuple{k::duplicates, 500, 4}}) {
    const dataset points = test::make_shape(kind, std::size_t(n), 2, test::test_seed());
    const double eps = test::eps_clear_of_pairs(
        points.view(), test::eps_for_selectivity(points.view(), points.view(), 15), 1e-9);
    SCOPED_TRACE(testing::Message() << test::to_string(kind) << " n=" << n);
    const dbscan_result actual = dbscan(res, points, eps, std::size_t(min_samples), opt);
    EXPECT_EQ(actual.merge, "device");
    expect_same(cluster("brute-cpu", points, eps, std::size_t(min_samples)), actual);
  }
}

// Labels of more points than a chunk of the pinned ring holds cross it in pieces (chunk_ids
// makes the chunks small: 80,000 points a piece, so 300,000 take four), each widened on the
// host; the last piece is a partial one.
TEST(dbscan_gpu, device_labels_through_the_pinned_ring) {
  const dataset points = test::paper_expo(2, 300000);
  const dbscan_result expected = cluster("lbjoin", points, 0.0006, 10, host_merge());
  EXPECT_GT(expected.n_clusters, 10u);
  EXPECT_GT(expected.n_noise, 0u);
  for (const char* chunk_ids : {"100000", "77777"}) {
    SCOPED_TRACE(chunk_ids);
    run_options small_chunks;
    small_chunks.params = {{"chunk_ids", chunk_ids}};
    expect_same(expected, cluster("lbjoin", points, 0.0006, 10, small_chunks));
  }
}

// Every pair of a million points on the device: the union-find's races at scale.
TEST(dbscan_gpu, a_million_points_merged_on_the_device) {
  const dataset points = test::paper_expo(2, 1000000);
  const dbscan_result expected = cluster("lbjoin", points, 0.0002, 10, host_merge());
  EXPECT_GT(expected.n_clusters, 100u);
  for (const std::string& engine : device_merging_engines()) {
    SCOPED_TRACE(engine);
    for (int run = 0; run < 2; ++run) expect_same(expected, cluster(engine, points, 0.0002, 10));
  }
}

// Sample weights and other metrics take every engine to the two joins into host sinks: the
// labels must still be the brute-force engine's.
TEST(dbscan_gpu, weights_and_metrics_on_every_device_engine) {
  const dataset points = test::make_shape(test::shape_kind::clusters, 3000, 3, test::test_seed());
  std::vector<double> weights(points.n());
  // Quarters from -0.75 to 2.25: sums exact in any order, some weights negative.
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = double((i * 7919) % 13) / 4 - 0.75;
  for (distance_metric metric : {distance_metric::euclidean, distance_metric::manhattan,
                                 distance_metric::cosine}) {
    dbscan_options opt;
    opt.metric = metric;
    opt.sample_weight = weights;
    const double eps = metric == distance_metric::cosine ? 1e-4 : 0.02;
    resources res;
    opt.engine = "brute-cpu";
    const dbscan_result expected = dbscan(res, points, eps, 5, opt);
    for (const std::string& engine : device_engines()) {
      SCOPED_TRACE(testing::Message() << engine << " " << to_string(metric));
      opt.engine = engine;
      const dbscan_result actual = dbscan(res, points, eps, 5, opt);
      EXPECT_EQ(actual.merge, "host");
      expect_same(expected, actual);
    }
  }
}

// Points already in device memory link on the device too, nothing uploaded: the labels of the
// same points on the host, on every engine that links.
TEST(dbscan_gpu, device_merge_of_points_in_device_memory) {
  const dataset points = test::make_shape(test::shape_kind::clusters, 4000, 2, test::test_seed());
  const double eps = test::eps_clear_of_pairs(
      points.view(), test::eps_for_selectivity(points.view(), points.view(), 15), 1e-9);
  const test::device_points on_device(points);
  const dbscan_result expected = cluster("brute-cpu", points, eps, 6);
  for (const std::string& engine : device_merging_engines()) {
    SCOPED_TRACE(engine);
    resources res;
    dbscan_options opt;
    opt.engine = engine;
    const dbscan_result actual = dbscan(res, on_device.view, eps, 6, opt);
    EXPECT_EQ(actual.merge, "device");
    bool noted = false;
    for (const auto& [name, value] : actual.notes) {
      if (name != "h2d_point_bytes") continue;
      noted = true;
      EXPECT_EQ(value, "0");
    }
    EXPECT_TRUE(noted);
    expect_same(expected, actual);
  }
}

// Weighted points in device memory take the host merge (its sinks read ids, never points): the
// labels of the host points', on every engine that joins device points (the GPU and tensor
// ones).
TEST(dbscan_gpu, weighted_points_in_device_memory) {
  const dataset points = test::make_shape(test::shape_kind::clusters, 3000, 2, test::test_seed());
  std::vector<double> weights(points.n());
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = double((i * 7919) % 13) / 4 - 0.75;
  const test::device_points on_device(points);
  dbscan_options opt;
  opt.sample_weight = weights;
  resources res;
  opt.engine = "brute-cpu";
  const dbscan_result expected = dbscan(res, points, 0.02, 5, opt);
  for (const engine_info& e : engines()) {
    // hegjoin's CPU side reads the points on the host: it refuses device points.
    if (!e.available || (e.processor != "gpu" && e.processor != "tensor")) continue;
    const std::string& engine = e.name;
    SCOPED_TRACE(engine);
    opt.engine = engine;
    const dbscan_result actual = dbscan(res, on_device.view, 0.02, 5, opt);
    EXPECT_EQ(actual.merge, "host");
    expect_same(expected, actual);
  }
  opt.sample_weight = {};
  opt.metric = distance_metric::manhattan;
  opt.engine = "lbjoin";
  EXPECT_THROW(dbscan(res, on_device.view, 0.02, 5, opt), invalid_argument);
}

}  // namespace
