// The oracle in every metric and in periodic boxes, against a plain loop over the harness's
// independent long-double distances (haversine by another formula, atan2 of 3-D vectors), on
// the metric harness's shapes: the two may differ only for pairs within a relative band of eps,
// never at exactly eps.
#include <gtest/gtest.h>

#include <cmath>

#include "support/metric_harness.hpp"
#include "support/seed.hpp"

namespace {

using epsjoin::distance_metric;
using epsjoin::index_pair;
using namespace epsjoin::test;

struct oracle_metric_case {
  distance_metric metric;
  metric_case c;
};

std::vector<oracle_metric_case> all_cases() {
  std::vector<oracle_metric_case> out;
  for (distance_metric m : {distance_metric::euclidean, distance_metric::manhattan,
                            distance_metric::chebyshev, distance_metric::cosine,
                            distance_metric::haversine}) {
    for (const metric_case& c : metric_cases(m, false)) out.push_back({m, c});
  }
  for (distance_metric m : {distance_metric::euclidean, distance_metric::manhattan,
                            distance_metric::chebyshev}) {
    for (const metric_case& c : metric_cases(m, true)) out.push_back({m, c});
  }
  return out;
}

class metric_oracle : public testing::TestWithParam<oracle_metric_case> {};

TEST_P(metric_oracle, matches_independent_distances) {
  const auto& [metric, c] = GetParam();
  const std::uint64_t seed = test_seed();
  const epsjoin::dataset data = make_metric_points(c, metric, c.n, seed);
  const epsjoin::dataset qs = c.self_join ? epsjoin::dataset() : make_metric_points(c, metric, c.n_queries, seed + 1);
  const epsjoin::dataset& queries = c.self_join ? data : qs;
  epsjoin::join_options opt;
  opt.engine = "brute-cpu";
  opt.metric = metric;
  opt.angles = c.degrees ? epsjoin::angle_unit::degrees : epsjoin::angle_unit::radians;
  opt.box = metric_box(c);
  opt.eps = metric_case_eps(c, opt, queries, data);

  epsjoin::resources res(2);
  epsjoin::csr_sink sink(true);
  if (c.self_join) {
    epsjoin::self_join(res, data.view(), opt, sink);
  } else {
    epsjoin::join(res, queries.view(), data.view(), opt, sink);
  }
  const double band = metric_band(metric, c.d, opt.eps);
  std::size_t ties = 0, pairs = 0;
  for (std::uint32_t i = 0; i < queries.n(); ++i) {
    const auto row = sink.table().row(i);
    for (std::uint32_t j = 0; j < data.n(); ++j) {
      if (c.self_join && i == j) continue;
      const long double dist =
          exact_metric_distance(opt, queries.f64() + i * c.d, data.f64() + j * c.d, c.d);
      const bool naive = dist <= opt.eps;
      const bool oracle = std::find(row.begin(), row.end(), j) != row.end();
      ties += dist == opt.eps ? 1 : 0;
      pairs += oracle ? 1 : 0;
      if (naive == oracle) continue;
      EXPECT_TRUE(dist != opt.eps && std::fabs(dist - opt.eps) <= band * opt.eps)
          << "(" << i << ", " << j << ") at " << static_cast<double>(dist) << ", eps " << opt.eps
          << ": oracle " << oracle;
    }
  }
  if (c.eps == metric_eps::tie && queries.n() > 20) {
    EXPECT_GT(ties, 0u) << "a tie case without a pair at exactly eps";
  }
  const bool all_within = !c.periodic || metric == distance_metric::chebyshev;
  if (c.eps == metric_eps::all && all_within) {
    EXPECT_EQ(pairs, queries.n() * data.n() - (c.self_join ? data.n() : 0));
  }
}

INSTANTIATE_TEST_SUITE_P(metrics, metric_oracle, testing::ValuesIn(all_cases()),
                         [](const testing::TestParamInfo<oracle_metric_case>& param_info) {
                           return std::string(epsjoin::to_string(param_info.param.metric)) +
                                  "_" + param_info.param.c.name();
                         });

// Queries that are the data's first rows (a view of X[:k] against X: the same first row, fewer
// rows) are not the data itself: the re-check once took them for it and read the data's terms
// past the queries' end, losing or inventing pairs.
TEST(metric_prefix_queries, equal_a_copy_of_them) {
  const std::uint64_t seed = test_seed();
  for (distance_metric metric : {distance_metric::cosine, distance_metric::haversine,
                                 distance_metric::manhattan}) {
    for (const metric_case& c : metric_cases(metric, false)) {
      if (c.n < 40) continue;
      const epsjoin::dataset data = make_metric_points(c, metric, c.n, seed);
      epsjoin::dataset_view prefix = data.view();
      prefix.n = c.n / 3;
      const epsjoin::dataset copy(std::vector<double>(data.f64(), data.f64() + prefix.n * c.d),
                                  c.d);
      epsjoin::join_options opt;
      opt.metric = metric;
      opt.angles = c.degrees ? epsjoin::angle_unit::degrees : epsjoin::angle_unit::radians;
      opt.eps = metric_case_eps(c, opt, data, data);
      for (const char* engine : {"brute-cpu", "cpu-grid", "super-ego"}) {
        SCOPED_TRACE(testing::Message() << epsjoin::to_string(metric) << " " << c.name() << " "
                                        << engine);
        opt.engine = engine;
        epsjoin::resources res(2);
        epsjoin::csr_sink from_view(true), from_copy(true);
        epsjoin::join(res, prefix, data.view(), opt, from_view);
        epsjoin::join(res, copy.view(), data.view(), opt, from_copy);
        EXPECT_EQ(from_view.table().offsets, from_copy.table().offsets);
        EXPECT_EQ(from_view.table().neighbors, from_copy.table().neighbors);
      }
    }
  }
}

}  // namespace
