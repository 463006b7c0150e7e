// OPTICS (epsjoin/optics.hpp) against an oracle written here as scikit-learn's loop runs it:
// every distance by the oracle's expression, the core distance from each point's sorted
// distances within max_eps, and each next point the unprocessed one of smallest
// (reachability, index) found by scanning them all. Every field equal to the last bit, on
// random data of several shapes, lattices (equal reachabilities everywhere: the tie rule),
// duplicates, every CPU engine, other metrics, min_samples from 1 to more than a row holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "epsjoin/optics.hpp"
#include "support/metric_oracle.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace epsjoin::test {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

struct plot {
  std::vector<std::uint32_t> ordering;
  std::vector<double> reach, core;
  std::vector<std::int64_t> pred;
};

plot oracle(dataset_view v, double max_eps, std::size_t min_samples, distance_metric m) {
  const std::size_t n = v.n;
  join_options o;
  o.metric = m;
  o.eps = max_eps;
  std::vector<std::vector<double>> d(n, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) d[i][j] = oracle_distance(o, v, i, v, j);
  }
  auto within = [&](std::size_t i, std::size_t j) { return oracle_within(o, v, i, v, j); };
  plot p{{},
         std::vector<double>(n, inf),
         std::vector<double>(n, inf),
         std::vector<std::int64_t>(n, -1)};
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> near{0.0};  // the point itself
    for (std::size_t j = 0; j < n; ++j) {
      if (j != i && within(i, j)) near.push_back(d[i][j]);
    }
    std::sort(near.begin(), near.end());
    if (near.size() >= min_samples) p.core[i] = near[min_samples - 1];
  }
  std::vector<bool> done(n, false);
  for (std::size_t step = 0; step < n; ++step) {
    std::size_t best = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (!done[i] && (best == n || p.reach[i] < p.reach[best])) best = i;
    }
    done[best] = true;
    p.ordering.push_back(static_cast<std::uint32_t>(best));
    if (p.core[best] == inf) continue;
    for (std::size_t j = 0; j < n; ++j) {
      if (done[j] || !within(best, j)) continue;
      const double r = std::max(d[best][j], p.core[best]);
      if (r < p.reach[j]) {
        p.reach[j] = r;
        p.pred[j] = static_cast<std::int64_t>(best);
      }
    }
  }
  return p;
}

void expect_plot(const optics_result& got, const plot& want) {
  EXPECT_EQ(got.ordering, want.ordering);
  EXPECT_EQ(got.core_distances, want.core);
  EXPECT_EQ(got.reachability, want.reach);
  EXPECT_EQ(got.predecessor, want.pred);
}

using optics_case = std::tuple<shape_kind, std::size_t /*d*/, distance_metric>;
class optics_test : public testing::TestWithParam<optics_case> {};

TEST_P(optics_test, plot_equals_the_oracle) {
  const auto [kind, d, metric] = GetParam();
  const std::uint64_t seed = test_seed();
  dataset points = make_shape(kind, 400, d, seed);
  if (metric == distance_metric::cosine) {
    for (std::size_t i = 0; i < points.n() * d; ++i) points.f64()[i] += 0.5;
  }
  const double max_eps = kind == shape_kind::lattice         ? 0.5
                         : metric == distance_metric::cosine ? 0.01
                                                             : 0.6 / std::sqrt(d + 2.0);
  resources res(2);
  for (const std::string engine : {"cpu-grid", "brute-cpu", "super-ego"}) {
    if (engine == "super-ego" && metric != distance_metric::euclidean) continue;
    for (const std::size_t min_samples :
         {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{40}}) {
      SCOPED_TRACE(testing::Message()
                   << engine << " min_samples " << min_samples << " seed " << seed);
      optics_options o;
      o.engine = engine;
      o.metric = metric;
      const optics_result got = optics(res, points.view(), max_eps, min_samples, o);
      expect_plot(got, oracle(points.view(), max_eps, min_samples, metric));
    }
  }
}

std::vector<optics_case> optics_cases() {
  std::vector<optics_case> cases;
  for (const shape_kind kind :
       {shape_kind::uniform, shape_kind::clusters, shape_kind::lattice, shape_kind::duplicates}) {
    for (const std::size_t d : {1, 2, 3, 6})
      cases.emplace_back(kind, d, distance_metric::euclidean);
  }
  for (const distance_metric m :
       {distance_metric::manhattan, distance_metric::chebyshev, distance_metric::cosine}) {
    cases.emplace_back(shape_kind::clusters, 3, m);
    cases.emplace_back(shape_kind::lattice, 2, m);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(shapes, optics_test, testing::ValuesIn(optics_cases()),
                         [](const testing::TestParamInfo<optics_case>& p) {
                           return to_string(std::get<0>(p.param)) + "_d" +
                                  std::to_string(std::get<1>(p.param)) + "_" +
                                  std::string(to_string(std::get<2>(p.param)));
                         });

// The DBSCAN labels read off the plot, against their definition evaluated position by position.
TEST(optics, dbscan_labels_from_the_plot) {
  const dataset points = make_shape(shape_kind::clusters, 600, 2, test_seed());
  resources res(2);
  const optics_result r = optics(res, points.view(), 0.2, 6);
  for (const double eps : {0.01, 0.03, 0.08, 0.2}) {
    const std::vector<std::int64_t> got = optics_dbscan_labels(r, eps);
    std::int64_t starts = 0;
    for (const std::uint32_t p : r.ordering) {
      const bool far = r.reachability[p] > eps, near_core = r.core_distances[p] <= eps;
      starts += far && near_core;
      EXPECT_EQ(got[p], far && !near_core ? -1 : starts - 1) << "eps " << eps << " point " << p;
    }
  }
}

TEST(optics, empty_input_and_refusals) {
  resources res(1);
  const dataset none(0, 2);
  const optics_result r = optics(res, none.view(), 0.5, 3);
  EXPECT_TRUE(r.ordering.empty() && r.reachability.empty());
  const dataset one = make_shape(shape_kind::uniform, 1, 2, 1);
  const optics_result single = optics(res, one.view(), 0.5, 1);
  EXPECT_EQ(single.ordering, std::vector<std::uint32_t>{0});
  EXPECT_EQ(single.core_distances, std::vector<double>{0.0});
  EXPECT_EQ(single.reachability, std::vector<double>{inf});
  EXPECT_THROW(optics(res, one.view(), 0.0, 3), invalid_argument);
  EXPECT_THROW(optics(res, one.view(), inf, 3), invalid_argument);
  EXPECT_THROW(optics(res, one.view(), 0.5, 0), invalid_argument);
}

}  // namespace
}  // namespace epsjoin::test
