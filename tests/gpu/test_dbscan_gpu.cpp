// DBSCAN on every GPU, tensor-core and CPU+GPU engine: the same sinks receive the GPU engines'
// pair batches, so each must give exactly the labels of the brute-force engine (the border and
// numbering rules leave no freedom), which tests/oracle/test_dbscan_oracle.cpp checks against an
// independent brute-force DBSCAN.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "epsjoin/dbscan.hpp"
#include "epsjoin/join.hpp"
#include "support/paper_data.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace {

using namespace epsjoin;

std::vector<std::string> device_engines() {
  std::vector<std::string> names;
  for (const engine_info& e : engines()) {
    if (e.processor != "cpu" && e.available) names.push_back(e.name);
  }
  return names;
}

dbscan_result cluster(const std::string& engine, const dataset& points, double eps,
                      std::size_t min_samples) {
  resources res;
  dbscan_options opt;
  opt.engine = engine;
  return dbscan(res, points, eps, min_samples, opt);
}

void expect_same(const dbscan_result& expected, const dbscan_result& actual) {
  ASSERT_EQ(expected.labels.size(), actual.labels.size());
  for (std::size_t i = 0; i < expected.labels.size(); ++i) {
    ASSERT_EQ(expected.core[i], actual.core[i]) << "point " << i;
    ASSERT_EQ(expected.labels[i], actual.labels[i]) << "point " << i;
  }
  EXPECT_EQ(expected.n_clusters, actual.n_clusters);
  EXPECT_EQ(expected.pairs, actual.pairs);
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
  for (const std::string& engine : {"gpu-sj", "lbjoin", "hegjoin"}) {
    SCOPED_TRACE(engine);
    expect_same(expected, cluster(engine, points, 0.0002, 10));
  }
}

}  // namespace
