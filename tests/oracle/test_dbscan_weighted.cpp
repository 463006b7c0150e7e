// DBSCAN with sample weights and other metrics (dbscan_options::sample_weight, ::metric) against
// a brute-force DBSCAN written here, with its own distances: the weights' sums decide the core
// points, the clusters are numbered by their first core point and a border point joins its core
// neighbour of smallest index, so the whole label vector must match.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "epsjoin/dbscan.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/join.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace {

using namespace epsjoin;

double distance(dataset_view v, std::size_t i, std::size_t j, distance_metric m) {
  double sum = 0, most = 0;
  for (std::size_t k = 0; k < v.d; ++k) {
    const double diff = std::abs(v.at(i, k) - v.at(j, k));
    sum += m == distance_metric::euclidean ? diff * diff : diff;
    most = std::max(most, diff);
  }
  if (m == distance_metric::chebyshev) return most;
  return m == distance_metric::euclidean ? std::sqrt(sum) : sum;
}

// Labels of a plain sequential DBSCAN: weighted core test, components by breadth-first search
// in index order (so numbered by their first core point), border points by their smallest core
// neighbour.
std::vector<std::int64_t> brute_labels(dataset_view v, double eps, std::size_t min_samples,
                                       const std::vector<double>& w, distance_metric m) {
  const std::size_t n = v.n;
  std::vector<std::vector<std::size_t>> near(n);
  std::vector<bool> core(n);
  for (std::size_t i = 0; i < n; ++i) {
    double mass = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (distance(v, i, j, m) <= eps) {
        near[i].push_back(j);
        mass += w.empty() ? 1.0 : w[j];
      }
    }
    core[i] = mass >= static_cast<double>(min_samples);
  }
  std::vector<std::int64_t> labels(n, -1);
  std::int64_t clusters = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (!core[s] || labels[s] >= 0) continue;
    std::deque<std::size_t> todo{s};
    labels[s] = clusters;
    while (!todo.empty()) {
      const std::size_t p = todo.front();
      todo.pop_front();
      for (std::size_t q : near[p]) {
        if (core[q] && labels[q] < 0) {
          labels[q] = clusters;
          todo.push_back(q);
        }
      }
    }
    ++clusters;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (core[i]) continue;
    for (std::size_t q : near[i]) {
      if (core[q]) {
        labels[i] = labels[q];
        break;
      }
    }
  }
  return labels;
}

// Weights in quarters: their sums are exact in any order, so the core test has one answer.
std::vector<double> quarter_weights(std::size_t n, std::uint64_t seed, int lowest) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> q(lowest, 11);
  std::vector<double> w(n);
  for (double& x : w) x = q(gen) / 4.0;
  return w;
}

class dbscan_weighted : public testing::TestWithParam<std::string> {};

TEST_P(dbscan_weighted, weights_and_metrics_match_brute_force) {
  const std::string engine = GetParam();
  const std::uint64_t seed = test::test_seed();
  int telling = 0;  // runs with several clusters and some noise
  for (distance_metric m :
       {distance_metric::euclidean, distance_metric::manhattan, distance_metric::chebyshev}) {
    for (std::size_t d : {1, 2, 3, 6}) {
      const dataset points = test::make_shape(test::shape_kind::clusters, 400, d, seed + d);
      for (int lowest : {0, -3}) {
        const std::vector<double> w = quarter_weights(points.n(), seed + d + 7, lowest);
        for (std::size_t min_samples : {1, 3, 8}) {
          // A sampled pair's own distance moved off (a tie the brute force's square root and the
          // library's squares could round apart); ties are tested on the lattice below.
          const double eps = test::eps_clear_of_pairs(
              points.view(), test::eps_for_selectivity(points.view(), points.view(), 6.0), 1e-9);
          SCOPED_TRACE(testing::Message()
                       << engine << " metric=" << to_string(m) << " d=" << d << " lowest=" << lowest
                       << " min_samples=" << min_samples << " seed=" << seed);
          resources res(3);
          dbscan_options o;
          o.engine = engine;
          o.metric = m;
          o.sample_weight = w;
          const dbscan_result r = dbscan(res, points, eps, min_samples, o);
          const std::vector<std::int64_t> want =
              brute_labels(points.view(), eps, min_samples, w, m);
          EXPECT_EQ(r.labels, want);
          telling += std::ranges::max(want) >= 1 && std::ranges::min(want) == -1;
          EXPECT_EQ(r.merge, "host");
          o.sample_weight = {};
          EXPECT_EQ(dbscan(res, points, eps, min_samples, o).labels,
                    brute_labels(points.view(), eps, min_samples, {}, m));
        }
      }
    }
  }
  EXPECT_GT(telling, 30);
}

TEST_P(dbscan_weighted, ties_at_exactly_eps) {
  // Lattice points 0.25 apart, eps 0.25: neighbours at exactly eps count with their weights.
  const std::string engine = GetParam();
  const dataset points = test::make_shape(test::shape_kind::lattice, 300, 2, test::test_seed());
  const std::vector<double> w = quarter_weights(points.n(), test::test_seed(), -2);
  for (std::size_t min_samples : {1, 2, 3, 5}) {
    resources res(2);
    dbscan_options o;
    o.engine = engine;
    o.sample_weight = w;
    EXPECT_EQ(dbscan(res, points, 0.25, min_samples, o).labels,
              brute_labels(points.view(), 0.25, min_samples, w, distance_metric::euclidean))
        << "min_samples " << min_samples;
  }
}

INSTANTIATE_TEST_SUITE_P(cpu, dbscan_weighted,
                         testing::Values("auto", "cpu-grid", "super-ego", "brute-cpu"),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           std::string name(param_info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(dbscan_weighted_args, rejects_bad_weights) {
  const dataset pts = test::make_shape(test::shape_kind::uniform, 10, 2, 1);
  resources res(1);
  dbscan_options o;
  std::vector<double> w(9, 1.0);
  o.sample_weight = w;
  EXPECT_THROW(dbscan(res, pts, 0.1, 3, o), invalid_argument);
  w.assign(10, 1.0);
  w[4] = std::nan("");
  o.sample_weight = w;
  EXPECT_THROW(dbscan(res, pts, 0.1, 3, o), invalid_argument);
  w[4] = INFINITY;
  EXPECT_THROW(dbscan(res, pts, 0.1, 3, o), invalid_argument);
}

TEST(dbscan_weighted_args, a_heavy_point_is_core_alone) {
  // scikit-learn's meaning: a weight of at least min_samples makes a core point by itself, and
  // a negative weight can keep its neighbours from being core.
  const dataset pts(std::vector<double>{0.0, 10.0, 10.05, 10.1}, 1);
  resources res(1);
  dbscan_options o;
  const std::vector<double> w{5.0, 1.0, -1.0, 1.0};
  o.sample_weight = w;
  const dbscan_result r = dbscan(res, pts, 0.2, 5, o);
  EXPECT_EQ(r.labels, (std::vector<std::int64_t>{0, -1, -1, -1}));
  EXPECT_EQ(r.n_core, 1u);
  EXPECT_EQ(dbscan(res, pts, 0.2, 1, o).labels, (std::vector<std::int64_t>{0, 1, 1, 1}));
}

}  // namespace
