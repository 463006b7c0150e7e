// The k nearest within a radius (epsjoin/nearest.hpp) against a brute-force oracle written here:
// every pair decided by the oracle's expressions, each query's neighbours sorted by (distance,
// id) and cut at k. Every CPU engine and an eps_index, self-joins with and without the point
// itself, A x B, k from 1 to more than any row holds, every metric, ties at exactly eps and
// equal distances (lattices, duplicates), float32 input, an empty side.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "epsjoin/index.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/nearest.hpp"
#include "support/metric_oracle.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace epsjoin::test {
namespace {

struct expected_row {
  std::vector<std::uint32_t> ids;
  std::vector<double> distances;
};

std::vector<expected_row> oracle(dataset_view q, dataset_view data, bool self, std::size_t k,
                                 const join_options& o) {
  std::vector<expected_row> rows(q.n);
  for (std::size_t i = 0; i < q.n; ++i) {
    std::vector<std::pair<double, std::uint32_t>> near;
    for (std::size_t j = 0; j < data.n; ++j) {
      if (self && i == j) {
        if (o.include_self) near.emplace_back(0.0, static_cast<std::uint32_t>(j));
        continue;
      }
      if (oracle_within(o, q, i, data, j)) {
        near.emplace_back(oracle_distance(o, q, i, data, j), static_cast<std::uint32_t>(j));
      }
    }
    std::sort(near.begin(), near.end());
    near.resize(std::min(near.size(), k));
    for (const auto& [dist, id] : near) {
      rows[i].ids.push_back(id);
      rows[i].distances.push_back(dist);
    }
  }
  return rows;
}

void expect_rows(const nearest_table& got, const std::vector<expected_row>& want) {
  ASSERT_EQ(got.n_queries(), want.size());
  for (std::size_t q = 0; q < want.size(); ++q) {
    const auto ids = got.row(q);
    const auto dist = got.distance_row(q);
    ASSERT_EQ(std::vector<std::uint32_t>(ids.begin(), ids.end()), want[q].ids) << "query " << q;
    ASSERT_EQ(std::vector<double>(dist.begin(), dist.end()), want[q].distances) << "query " << q;
  }
}

dataset as_f32(const dataset& d) {
  std::vector<float> v(d.n() * d.d());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(d.f64()[i]);
  return dataset(std::move(v), d.d());
}

using nearest_case = std::tuple<shape_kind, std::size_t /*d*/, distance_metric>;
class nearest_test : public testing::TestWithParam<nearest_case> {};

TEST_P(nearest_test, k_nearest_equal_the_oracle) {
  const auto [kind, d, metric] = GetParam();
  const std::uint64_t seed = test_seed();
  dataset points = make_shape(kind, 500, d, seed);
  dataset queries = make_shape(kind, 90, d, seed + 1);
  if (metric == distance_metric::cosine) {  // no zero rows
    for (dataset* s : {&points, &queries}) {
      double* v = s->f64();
      for (std::size_t i = 0; i < s->n() * d; ++i) v[i] += 0.5;
    }
  }
  join_options o;
  o.metric = metric;
  const bool lattice = kind == shape_kind::lattice;
  o.eps = metric == distance_metric::cosine ? 0.02 : (lattice ? 0.5 : 0.5 / std::sqrt(d + 1.0));
  if (kind == shape_kind::duplicates) o.eps = 0.05;
  resources res(2);
  for (const std::string engine : {"brute-cpu", "cpu-grid", "super-ego"}) {
    o.engine = engine;
    if (engine == "super-ego" && metric != distance_metric::euclidean) continue;
    for (const std::size_t k :
         {std::size_t{1}, std::size_t{4}, std::size_t{30}, std::size_t{5000}}) {
      SCOPED_TRACE(testing::Message() << engine << " k " << k << " seed " << seed);
      for (const bool with_self : {false, true}) {
        o.include_self = with_self;
        expect_rows(self_nearest_within(res, points.view(), k, o),
                    oracle(points.view(), points.view(), true, k, o));
      }
      o.include_self = false;
      expect_rows(nearest_within(res, queries.view(), points.view(), k, o),
                  oracle(queries.view(), points.view(), false, k, o));
    }
  }
}

std::vector<nearest_case> nearest_cases() {
  std::vector<nearest_case> cases;
  for (const shape_kind kind :
       {shape_kind::uniform, shape_kind::clusters, shape_kind::lattice, shape_kind::duplicates}) {
    for (const std::size_t d : {1, 2, 3, 8})
      cases.emplace_back(kind, d, distance_metric::euclidean);
  }
  for (const distance_metric m :
       {distance_metric::manhattan, distance_metric::chebyshev, distance_metric::cosine}) {
    cases.emplace_back(shape_kind::uniform, 3, m);
    cases.emplace_back(shape_kind::lattice, 2, m);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(shapes, nearest_test, testing::ValuesIn(nearest_cases()),
                         [](const testing::TestParamInfo<nearest_case>& p) {
                           return to_string(std::get<0>(p.param)) + "_d" +
                                  std::to_string(std::get<1>(p.param)) + "_" +
                                  std::string(to_string(std::get<2>(p.param)));
                         });

// Through an eps_index, float32 points, and an empty side: the same sink, the same rows.
TEST(nearest, index_queries_float32_and_empty_sides) {
  const std::uint64_t seed = test_seed();
  const dataset points = make_shape(shape_kind::lattice, 500, 2, seed);
  const dataset queries = make_shape(shape_kind::lattice, 40, 2, seed + 1);
  resources res(2);
  join_options o;
  o.eps = 0.5;
  const eps_index index(res, points.view(), 0.5);
  for (const std::size_t m : {std::size_t{3}, std::size_t{40}}) {  // the grid walk and the join
    const dataset_view q{queries.f64(), m, 2, scalar_type::f64};
    nearest_sink sink(q, points.view(), 6, o);
    index.query(res, q, 0.5, {}, sink);
    expect_rows(sink.table(), oracle(q, points.view(), false, 6, o));
  }
  const dataset p32 = as_f32(points);
  expect_rows(self_nearest_within(res, p32.view(), 5, o),
              oracle(p32.view(), p32.view(), true, 5, o));
  const dataset none(0, 2);
  EXPECT_EQ(self_nearest_within(res, none.view(), 3, o).n_queries(), 0u);
  const nearest_table empty = nearest_within(res, queries.view(), none.view(), 3, o);
  ASSERT_EQ(empty.n_queries(), queries.n());
  EXPECT_TRUE(empty.neighbors.empty());
  EXPECT_THROW(nearest_sink(queries.view(), points.view(), 0, o), invalid_argument);
}

}  // namespace
}  // namespace epsjoin::test
