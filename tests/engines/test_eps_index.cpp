// eps_index against the brute-force oracle: one index per shape, several query sets and several
// eps up to max_eps on it, each answer checked against a fresh oracle join (pairs, counts, CSR
// rows), ties at exactly eps on integer lattices, f32 and f64, d from 1 to 16, N from 0 to 50k.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "epsjoin/index.hpp"
#include "support/harness.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace {

using epsjoin::dataset;
using epsjoin::index_pair;
using epsjoin::scalar_type;
using epsjoin::test::index_pairs;
using epsjoin::test::shape_kind;

std::vector<index_pair> sorted_pairs(std::vector<index_pair> pairs) {
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// Pairs, counts and CSR rows of the index equal the oracle's at eps.
void check_query(const epsjoin::eps_index& index, const dataset& data, const dataset* queries,
                 double eps, scalar_type precision) {
  SCOPED_TRACE(testing::Message() << "eps " << eps << (queries ? ", A x B (" : ", self (")
                                  << (queries ? queries->n() : data.n()) << " queries), seed "
                                  << epsjoin::test::test_seed());
  const epsjoin::dataset_view q = queries ? queries->view() : data.view();
  const auto expected = epsjoin::test::run_collect({"brute-cpu"}, q, data.view(), !queries, eps);
  epsjoin::join_stats stats;
  const auto got = index_pairs(index, queries, eps, &stats);
  EXPECT_TRUE(std::adjacent_find(got.begin(), got.end()) == got.end()) << "a pair twice";
  const double band = epsjoin::test::error_band({"cpu-grid", {}, precision}, data.d());
  EXPECT_TRUE(epsjoin::test::same_pairs(expected, got, q, data.view(), eps, band));
  EXPECT_EQ(stats.pairs, got.size());
  EXPECT_EQ(stats.engine, "cpu-grid");
  // A few queries walk the grid on the calling thread (cpu/eps_index_few.hpp), at most four
  // indexed dimensions: every set of up to 16 queries in up to 4-D must have taken that path.
  const bool walked = std::any_of(stats.notes.begin(), stats.notes.end(),
                                  [](const auto& note) { return note.first == "few queries"; });
  if (queries && q.n > 0 && q.n <= 16 && data.n() > 0 && data.d() <= 4) {
    EXPECT_TRUE(walked) << "a few queries did not take the grid walk";
  }
  if (q.n > 16) {
    EXPECT_FALSE(walked);
  }

  epsjoin::resources res(2);
  epsjoin::count_sink counts(true);
  const epsjoin::join_stats counted =
      queries ? index.query(res, q, eps, {}, counts) : index.self_join(res, eps, {}, counts);
  EXPECT_EQ(counts.total(), got.size());
  EXPECT_EQ(counted.pairs, got.size());
  std::vector<std::uint64_t> per_query(q.n, 0);
  for (const index_pair& p : got) ++per_query[p.query];
  EXPECT_EQ(counts.per_point(), per_query);

  epsjoin::csr_sink table(true);
  if (queries) {
    index.query(res, q, eps, {}, table);
  } else {
    index.self_join(res, eps, {}, table);
  }
  std::vector<index_pair> from_rows;
  const epsjoin::neighbor_table& t = table.table();
  ASSERT_EQ(t.offsets.size(), q.n + 1);
  for (std::size_t i = 0; i < q.n; ++i) {
    for (std::uint64_t k = t.offsets[i]; k < t.offsets[i + 1]; ++k) {
      from_rows.push_back({static_cast<std::uint32_t>(i), t.neighbors[k]});
    }
  }
  EXPECT_EQ(sorted_pairs(from_rows), got) << "CSR rows differ from the pairs";
}

dataset as_type(const dataset& d, scalar_type type) {
  if (type == scalar_type::f64)
    return dataset(std::vector<double>(d.f64(), d.f64() + d.n() * d.d()), d.d());
  std::vector<float> v(d.n() * d.d());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(d.f64()[i]);
  return dataset(std::move(v), d.d());
}

// The first m points, column 0 moved past the data's largest value by up to `beyond` (0: the
// points unchanged).
dataset first_rows(const dataset& data, std::size_t m, double beyond = 0) {
  const epsjoin::dataset_view v = data.view();
  std::vector<double> rows(m * v.d);
  double top = v.n > 0 ? v.at(0, 0) : 0;
  for (std::size_t i = 0; i < v.n; ++i) top = std::max(top, v.at(i, 0));
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t k = 0; k < v.d; ++k) rows[i * v.d + k] = v.at(i, k);
    if (beyond > 0) rows[i * v.d] = top + beyond * static_cast<double>(i) / static_cast<double>(m);
  }
  return as_type(dataset(std::move(rows), v.d), data.type());
}

using index_case = std::tuple<shape_kind, std::size_t /*n*/, std::size_t /*d*/, scalar_type>;

class eps_index_test : public testing::TestWithParam<index_case> {};

// One index at max_eps; the data itself, other query sets (of other sizes, 0 and 1 included)
// and the self-join, each at max_eps and smaller eps.
TEST_P(eps_index_test, many_queries_and_eps_equal_fresh_joins) {
  const auto [kind, n, d, precision] = GetParam();
  const std::uint64_t seed = epsjoin::test::test_seed();
  // float32 input too (its copy is what float32's re-checks read).
  const scalar_type input =
      precision == scalar_type::f32 && d % 2 == 1 ? scalar_type::f32 : scalar_type::f64;
  const dataset data = as_type(epsjoin::test::make_shape(kind, n, d, seed), input);
  const bool lattice = kind == shape_kind::lattice;
  // The lattice's spacing is 0.25: ties at exactly eps for eps a multiple of it.
  double max_eps =
      lattice ? 0.5
              : (n < 2 ? 0.3 : epsjoin::test::eps_for_selectivity(data.view(), data.view(), 20));
  if (!(max_eps > 0)) max_eps = 0.1;  // duplicates: 20 neighbours at distance 0
  const std::vector<double> radii =
      lattice ? std::vector<double>{0.5, 0.25, 0.5 - 1e-12}
              : std::vector<double>{max_eps, max_eps * 0.5, max_eps * 0.13};
  std::vector<dataset> query_sets;
  query_sets.push_back(as_type(epsjoin::test::make_shape(kind, n / 3 + 7, d, seed + 1), input));
  query_sets.push_back(as_type(epsjoin::test::make_shape(kind, 1, d, seed + 2), input));
  query_sets.push_back(dataset(0, d, input));
  // The grid walk's limits and edges: 16 and 17 of the indexed points themselves (lattice ties
  // at exactly eps), and a few moved up to 0.9 max_eps beyond the grid along column 0.
  for (const std::size_t m : {std::size_t{16}, std::size_t{17}}) {
    query_sets.push_back(first_rows(data, std::min(m, n)));
  }
  query_sets.push_back(first_rows(data, std::min<std::size_t>(5, n), 0.9 * max_eps));

  epsjoin::resources res(3);
  epsjoin::index_options opt;
  opt.precision = precision;
  const epsjoin::eps_index index(res, data.view(), max_eps, opt);
  EXPECT_EQ(index.n(), n);
  EXPECT_EQ(index.max_eps(), max_eps);
  // The same with finer grids, which queries below max_eps take where they are kept.
  opt.finer_grids = 3;
  const epsjoin::eps_index finer(res, data.view(), max_eps, opt);
  for (const double eps : radii) {
    for (const epsjoin::eps_index* i : {&index, &finer}) {
      check_query(*i, data, nullptr, eps, precision);
      for (const dataset& queries : query_sets) check_query(*i, data, &queries, eps, precision);
    }
  }
}

std::vector<index_case> index_cases() {
  std::vector<index_case> cases;
  for (const scalar_type p : {scalar_type::f64, scalar_type::f32}) {
    for (const std::size_t d : {1, 2, 3, 5, 8, 9, 16}) {
      for (const shape_kind k : {shape_kind::uniform, shape_kind::clusters, shape_kind::lattice,
                                 shape_kind::duplicates}) {
        cases.emplace_back(k, d <= 3 ? 1500 : 600, d, p);
      }
    }
    cases.emplace_back(shape_kind::skewed, 2000, 2, p);
    cases.emplace_back(shape_kind::embedded, 800, 6, p);
    cases.emplace_back(shape_kind::offset, 800, 3, p);
    cases.emplace_back(shape_kind::uniform, 0, 3, p);
    cases.emplace_back(shape_kind::uniform, 1, 3, p);
    cases.emplace_back(shape_kind::uniform, 2, 4, p);
  }
  return cases;
}

std::string index_case_name(const testing::TestParamInfo<index_case>& param) {
  const auto& [k, n, d, p] = param.param;
  return epsjoin::test::to_string(k) + "_n" + std::to_string(n) + "_d" + std::to_string(d) + "_" +
         std::string(epsjoin::to_string(p));
}

INSTANTIATE_TEST_SUITE_P(shapes, eps_index_test, testing::ValuesIn(index_cases()), index_case_name);

}  // namespace
