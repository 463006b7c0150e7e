// eps_index beyond the Euclidean shapes: every metric against the oracle (ties at exactly eps),
// the self pairs, the sinks that take unordered pairs or rows, points freed after the build, a
// moved index, 50k points, and the errors a caller can make.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "epsjoin/index.hpp"
#include "support/harness.hpp"
#include "support/metric_harness.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace {

using epsjoin::dataset;
using epsjoin::distance_metric;
using epsjoin::index_pair;

// The index's pairs (sorted), as the harness collects them.
std::vector<index_pair> collect(const epsjoin::eps_index& index, const dataset* queries, double eps,
                                bool include_self = false) {
  return epsjoin::test::index_pairs(index, queries, eps, nullptr, include_self);
}

std::vector<index_pair> oracle(epsjoin::join_options opt, const dataset* queries,
                               const dataset& data, double eps) {
  epsjoin::resources res(2);
  opt.engine = "brute-cpu";
  opt.eps = eps;
  std::vector<index_pair> pairs;
  epsjoin::callback_sink sink([&](std::span<const index_pair> batch) {
    pairs.insert(pairs.end(), batch.begin(), batch.end());
  });
  if (queries == nullptr) {
    epsjoin::self_join(res, data.view(), opt, sink);
  } else {
    epsjoin::join(res, queries->view(), data.view(), opt, sink);
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// The index's pairs equal the oracle's in the metric, but for pairs within the metric's band of
// eps (never one at exactly eps).
void expect_metric_pairs(const epsjoin::eps_index& index, const epsjoin::join_options& opt,
                         const dataset* queries, const dataset& data, double eps) {
  const dataset& q = queries ? *queries : data;
  SCOPED_TRACE(testing::Message() << "metric " << epsjoin::to_string(opt.metric) << ", eps " << eps
                                  << (queries ? ", A x B" : ", self"));
  const auto expected = oracle(opt, queries, data, eps);
  const auto got = collect(index, queries, eps);
  EXPECT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end()) << "a pair twice";
  std::vector<index_pair> missing, extra;
  std::set_difference(expected.begin(), expected.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  epsjoin::join_options at = opt;
  at.eps = eps;
  const double band = std::max(epsjoin::test::metric_band(opt.metric, data.d(), eps), 1e-12);
  auto distance = [&](const index_pair& p) {
    return epsjoin::test::exact_metric_distance(at, q.f64() + p.query * q.d(),
                                                data.f64() + p.neighbor * data.d(), data.d());
  };
  for (const index_pair& p : missing) {
    const long double dist = distance(p);
    EXPECT_TRUE(dist != eps && std::fabs(dist - eps) <= band * eps)
        << "missing (" << p.query << ", " << p.neighbor << ") at " << static_cast<double>(dist);
  }
  for (const index_pair& p : extra) {
    EXPECT_TRUE(std::fabs(distance(p) - eps) <= band * eps)
        << "extra (" << p.query << ", " << p.neighbor << ") at "
        << static_cast<double>(distance(p));
  }
}

class eps_index_metric_test : public testing::TestWithParam<distance_metric> {};

TEST_P(eps_index_metric_test, several_eps_and_query_sets_match_oracle) {
  const distance_metric metric = GetParam();
  const std::uint64_t seed = epsjoin::test::test_seed();
  for (const epsjoin::test::metric_case& c : epsjoin::test::metric_cases(metric, false)) {
    if (!c.self_join || c.eps == epsjoin::test::metric_eps::none) continue;
    SCOPED_TRACE(c.name());
    const dataset data = epsjoin::test::make_metric_points(c, metric, c.n, seed);
    const dataset queries = epsjoin::test::make_metric_points(c, metric, c.n / 2 + 3, seed + 7);
    epsjoin::join_options opt;
    opt.metric = metric;
    opt.angles = c.degrees ? epsjoin::angle_unit::degrees : epsjoin::angle_unit::radians;
    const double eps = epsjoin::test::metric_case_eps(c, opt, data, data);
    // A tie case keeps its ties at max_eps (lattices: 0.5 is a multiple of 0.25 too).
    const bool tie = c.eps == epsjoin::test::metric_eps::tie;
    const double max_eps = tie ? 2 * eps : eps * 1.5;
    for (const epsjoin::scalar_type p : {epsjoin::scalar_type::f64, epsjoin::scalar_type::f32}) {
      epsjoin::resources res(3);
      epsjoin::index_options io;
      io.metric = metric;
      io.angles = opt.angles;
      io.precision = p;
      io.finer_grids = p == epsjoin::scalar_type::f32 ? 2 : 0;  // both kinds of index
      const epsjoin::eps_index index(res, data.view(), max_eps, io);
      for (const double e : {max_eps, eps, eps * 0.5}) {
        expect_metric_pairs(index, opt, nullptr, data, e);
        expect_metric_pairs(index, opt, &queries, data, e);
      }
    }
  }
}

std::string metric_name(const testing::TestParamInfo<distance_metric>& param) {
  return std::string(epsjoin::to_string(param.param));
}

INSTANTIATE_TEST_SUITE_P(metrics, eps_index_metric_test,
                         testing::Values(distance_metric::euclidean, distance_metric::manhattan,
                                         distance_metric::chebyshev, distance_metric::cosine,
                                         distance_metric::haversine),
                         metric_name);

TEST(eps_index, self_pairs_unordered_pairs_and_rows) {
  const dataset data = epsjoin::test::make_shape(epsjoin::test::shape_kind::lattice, 700, 3,
                                                 epsjoin::test::test_seed());
  epsjoin::resources res(3);
  const epsjoin::eps_index index(res, data.view(), 0.5);
  for (const double eps : {0.5, 0.25}) {
    const auto plain = oracle({}, nullptr, data, eps);
    auto with_self = plain;
    for (std::uint32_t i = 0; i < data.n(); ++i) with_self.push_back({i, i});
    std::sort(with_self.begin(), with_self.end());
    EXPECT_EQ(collect(index, nullptr, eps, true), with_self);

    epsjoin::query_options qo;
    qo.include_self = true;
    epsjoin::csr_sink table(true);
    const epsjoin::join_stats s = index.self_join(res, eps, qo, table);
    EXPECT_EQ(s.pairs, plain.size());
    EXPECT_EQ(s.self_pairs, data.n());
    std::vector<index_pair> rows;
    for (std::uint32_t q = 0; q < table.table().n_queries(); ++q) {
      for (std::uint32_t nb : table.table().row(q)) rows.push_back({q, nb});
    }
    EXPECT_EQ(rows, with_self);

    epsjoin::count_sink counts(true);
    index.self_join(res, eps, qo, counts);
    EXPECT_EQ(counts.total(), with_self.size());

    epsjoin::unique_pairs_sink unique;
    index.self_join(res, eps, {}, unique);
    std::vector<index_pair> both;
    for (const index_pair& p : unique.pairs()) {
      ASSERT_LT(p.query, p.neighbor);
      both.push_back(p);
      both.push_back({p.neighbor, p.query});
    }
    std::sort(both.begin(), both.end());
    EXPECT_EQ(both, plain);
  }
}

// The index owns what it reads: the points may be overwritten and freed once it is built.
TEST(eps_index, points_may_go_after_the_build_and_the_index_moves) {
  const dataset kept = epsjoin::test::make_shape(epsjoin::test::shape_kind::lattice, 900, 2,
                                                 epsjoin::test::test_seed());
  for (const epsjoin::scalar_type p : {epsjoin::scalar_type::f64, epsjoin::scalar_type::f32}) {
    SCOPED_TRACE(std::string(epsjoin::to_string(p)));
    epsjoin::resources res(2);
    epsjoin::index_options io;
    io.precision = p;
    std::unique_ptr<epsjoin::eps_index> index;
    {
      auto temporary = std::make_unique<dataset>(
          std::vector<double>(kept.f64(), kept.f64() + kept.n() * kept.d()), kept.d());
      index = std::make_unique<epsjoin::eps_index>(res, temporary->view(), 0.5, io);
      std::fill(temporary->f64(), temporary->f64() + kept.n() * kept.d(), 1e300);
    }
    epsjoin::eps_index moved = std::move(*index);
    index.reset();
    EXPECT_EQ(moved.n(), kept.n());
    EXPECT_EQ(moved.precision(), p);
    EXPECT_GT(moved.memory_bytes(), kept.n() * 2 * (p == epsjoin::scalar_type::f32 ? 4 : 8));
    const dataset queries = epsjoin::test::make_shape(epsjoin::test::shape_kind::lattice, 300, 2,
                                                      epsjoin::test::test_seed() + 3);
    for (const double eps : {0.5, 0.25}) {
      EXPECT_EQ(collect(moved, nullptr, eps), oracle({}, nullptr, kept, eps));
      EXPECT_EQ(collect(moved, &queries, eps), oracle({}, &queries, kept, eps));
    }
  }
}

// 50k points: the index's answers equal fresh cpu-grid joins (a lattice: exact in any order).
TEST(eps_index, fifty_thousand_points_equal_fresh_joins) {
  const dataset data = epsjoin::test::make_shape(epsjoin::test::shape_kind::lattice, 50000, 3,
                                                 epsjoin::test::test_seed());
  const dataset queries = epsjoin::test::make_shape(epsjoin::test::shape_kind::lattice, 20000, 3,
                                                    epsjoin::test::test_seed() + 1);
  epsjoin::resources res(3);
  const epsjoin::eps_index index(res, data.view(), 0.75);
  for (const double eps : {0.75, 0.5, 0.25}) {
    epsjoin::join_options opt;
    opt.engine = "cpu-grid";
    opt.eps = eps;
    epsjoin::count_sink fresh(true), reused(true);
    epsjoin::self_join(res, data.view(), opt, fresh);
    index.self_join(res, eps, {}, reused);
    EXPECT_EQ(reused.per_point(), fresh.per_point()) << "self, eps " << eps;
    EXPECT_GT(fresh.total(), 0u);
    epsjoin::csr_sink fresh_rows(true), reused_rows(true);
    epsjoin::join(res, queries.view(), data.view(), opt, fresh_rows);
    index.query(res, queries.view(), eps, {}, reused_rows);
    EXPECT_EQ(reused_rows.table().offsets, fresh_rows.table().offsets) << "A x B, eps " << eps;
    EXPECT_EQ(reused_rows.table().neighbors, fresh_rows.table().neighbors) << "A x B, eps " << eps;
  }
}

template <class F>
void expect_invalid(F&& f, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying '" << words << "'";
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(eps_index, refuses_what_a_join_would_and_eps_beyond_max_eps) {
  const dataset data = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 200, 3, 5);
  epsjoin::resources res(2);
  const epsjoin::eps_index index(res, data.view(), 0.1);
  epsjoin::count_sink sink;
  expect_invalid([&] { index.self_join(res, 0.2, {}, sink); }, "exceeds the index's max_eps 0.1");
  expect_invalid([&] { index.query(res, data.view(), 0.1000001, {}, sink); }, "max_eps");
  expect_invalid([&] { index.self_join(res, 0.0, {}, sink); }, "eps must be a finite number > 0");
  expect_invalid([&] { index.self_join(res, std::nan(""), {}, sink); }, "finite");
  const dataset other_d = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 10, 2, 5);
  expect_invalid([&] { index.query(res, other_d.view(), 0.1, {}, sink); }, "2 dimensions");
  epsjoin::query_options with_self;
  with_self.include_self = true;
  expect_invalid([&] { index.query(res, data.view(), 0.1, with_self, sink); }, "include_self");
  dataset bad = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 10, 3, 5);
  bad.f64()[7] = std::nan("");
  expect_invalid([&] { index.query(res, bad.view(), 0.1, {}, sink); }, "point 2, dimension 1");
  expect_invalid([&] { epsjoin::eps_index(res, bad.view(), 0.1); }, "point 2, dimension 1");
  expect_invalid([&] { epsjoin::eps_index(res, data.view(), -1); }, "max_eps must be");
  epsjoin::index_options typo;
  typo.params = {{"patern", "full"}};
  expect_invalid([&] { epsjoin::eps_index(res, data.view(), 0.1, typo); }, "patern");
  epsjoin::dataset_view on_device = data.view();
  on_device.space = epsjoin::memory_space::device;
  expect_invalid([&] { index.query(res, on_device, 0.1, {}, sink); }, "device memory");
  // A float32 index bins queries in float32 about its points' centre.
  epsjoin::index_options f32;
  f32.precision = epsjoin::scalar_type::f32;
  const epsjoin::eps_index narrow(res, data.view(), 0.1, f32);
  dataset far = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 3, 3, 5);
  far.f64()[4] = 1e300;
  expect_invalid([&] { narrow.query(res, far.view(), 0.1, {}, sink); }, "float32 range");
}

// The index's size is checked against the host limit before anything is allocated, and a
// query's in-memory result against it as a join's is.
TEST(eps_index, memory_limit_refuses_the_build_and_large_results) {
  const dataset data = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 50000, 3, 9);
  epsjoin::resources tight(2);
  tight.set_memory({std::uint64_t{1} << 20, 0});
  EXPECT_THROW(epsjoin::eps_index(tight, data.view(), 0.05), epsjoin::out_of_memory);
  epsjoin::resources res(2);
  const epsjoin::eps_index index(res, data.view(), 0.2);  // about 1000 neighbours a point
  epsjoin::csr_sink table;
  EXPECT_THROW(index.self_join(tight, 0.2, {}, table), epsjoin::out_of_memory);
  epsjoin::count_sink counts;  // keeps nothing: never refused
  EXPECT_GT(index.self_join(tight, 0.2, {}, counts).pairs, 0u);
}

// A progress callback that throws cancels the query, as it cancels a join.
TEST(eps_index, a_throwing_progress_callback_cancels_a_query) {
  const dataset data = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 20000, 2, 4);
  epsjoin::resources res(2);
  const epsjoin::eps_index index(res, data.view(), 0.05);
  epsjoin::query_options qo;
  qo.progress = [](double) { throw std::runtime_error("stop"); };
  epsjoin::count_sink counts;
  EXPECT_THROW(index.self_join(res, 0.05, qo, counts), std::runtime_error);
  EXPECT_GT(index.self_join(res, 0.05, {}, counts).pairs, 0u);  // the index is intact
}

// Points spread beyond float32's range about their centre: a float32 index is float64, exact.
TEST(eps_index, float32_falls_back_to_float64_beyond_its_range) {
  const dataset lattice = epsjoin::test::make_shape(epsjoin::test::shape_kind::lattice, 400, 2, 3);
  std::vector<double> v(lattice.f64(), lattice.f64() + lattice.n() * 2);
  v.insert(v.end(), {1e39, 0.0, -1e39, 0.25});
  const dataset data(std::move(v), 2);
  epsjoin::resources res(2);
  epsjoin::index_options f32;
  f32.precision = epsjoin::scalar_type::f32;
  const epsjoin::eps_index index(res, data.view(), 0.5, f32);
  EXPECT_EQ(index.precision(), epsjoin::scalar_type::f64);
  EXPECT_EQ(epsjoin::test::note_of(index.build_stats(), "precision"),
            "float64: coordinates exceed the float32 range");
  for (const double eps : {0.5, 0.25}) {
    EXPECT_EQ(collect(index, nullptr, eps), oracle({}, nullptr, data, eps));
    EXPECT_EQ(collect(index, &lattice, eps), oracle({}, &lattice, data, eps));
  }
}

// Finer grids are kept while their cells hold 8 points on average, and a query takes the
// finest as wide as its eps; the answers equal fresh joins' whichever grid serves them.
TEST(eps_index, finer_grids_serve_smaller_eps_while_their_cells_are_full) {
  const dataset data = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 20000, 2, 6);
  epsjoin::resources res(2);
  epsjoin::index_options io;
  io.finer_grids = 8;
  // About 400 points a cell at 0.1; a quarter as many at each halving: 100, 25, 6 (dropped).
  const epsjoin::eps_index index(res, data.view(), 0.1, io);
  const epsjoin::join_stats& built = index.build_stats();
  EXPECT_NE(epsjoin::test::note_of(built, "finer grid 2"), "");
  EXPECT_EQ(epsjoin::test::note_of(built, "finer grid 3"), "");
  const std::vector<std::pair<double, std::string>> expected = {
      {0.1, "0 of 0 to 2"},  {0.07, "0 of 0 to 2"},  {0.05, "1 of 0 to 2"},
      {0.03, "1 of 0 to 2"}, {0.025, "2 of 0 to 2"}, {0.01, "2 of 0 to 2"}};
  for (const auto& [eps, grid] : expected) {
    epsjoin::count_sink reused(true), fresh(true);
    const epsjoin::join_stats s = index.self_join(res, eps, {}, reused);
    EXPECT_EQ(epsjoin::test::note_of(s, "eps_index grid").substr(0, grid.size()), grid) << eps;
    epsjoin::join_options opt;
    opt.engine = "cpu-grid";
    opt.eps = eps;
    epsjoin::self_join(res, data.view(), opt, fresh);
    EXPECT_EQ(reused.per_point(), fresh.per_point()) << eps;
  }
  epsjoin::index_options too_many;
  too_many.finer_grids = 9;
  EXPECT_THROW(epsjoin::eps_index(res, data.view(), 0.1, too_many), epsjoin::invalid_argument);
}

// Queries leave the index unchanged: several threads may query one index at once.
TEST(eps_index, concurrent_queries_from_several_threads) {
  const dataset data = epsjoin::test::make_shape(epsjoin::test::shape_kind::clusters, 20000, 3, 8);
  epsjoin::resources res(2);
  epsjoin::index_options io;
  io.finer_grids = 2;
  const epsjoin::eps_index index(res, data.view(), 0.05, io);
  const std::vector<double> radii = {0.05, 0.03, 0.02, 0.01};
  std::vector<std::vector<std::uint64_t>> expected;
  for (const double eps : radii) {
    epsjoin::count_sink c(true);
    index.self_join(res, eps, {}, c);
    expected.push_back(c.per_point());
  }
  std::vector<std::vector<std::uint64_t>> got(radii.size() * 2);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      epsjoin::resources own(2);
      epsjoin::count_sink c(true);
      index.self_join(own, radii[t % radii.size()], {}, c);
      got[t] = c.per_point();
    });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t t = 0; t < got.size(); ++t) EXPECT_EQ(got[t], expected[t % radii.size()]) << t;
}

TEST(eps_index, an_empty_index_and_empty_queries) {
  epsjoin::resources res(2);
  const dataset none(0, 3);
  const epsjoin::eps_index empty(res, none.view(), 1.0);
  const dataset some = epsjoin::test::make_shape(epsjoin::test::shape_kind::uniform, 50, 3, 1);
  epsjoin::csr_sink table;
  const epsjoin::join_stats s = empty.query(res, some.view(), 1.0, {}, table);
  EXPECT_EQ(s.pairs, 0u);
  EXPECT_EQ(table.table().offsets.size(), 51u);
  epsjoin::query_options qo;
  qo.include_self = true;
  epsjoin::count_sink counts;
  EXPECT_EQ(empty.self_join(res, 0.5, qo, counts).pairs, 0u);
  EXPECT_EQ(counts.total(), 0u);
}

}  // namespace
