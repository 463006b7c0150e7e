// A CSR table with each neighbour's distance (csr_sink made with_distances) from every CPU
// engine against the oracle: the same rows as the oracle's pairs, and each distance equal, to
// the last bit, to the float64 sum of squares in dimension order (scipy's and scikit-learn's
// trees sum so). cpu-grid writes them as it finds each neighbour where its copy of the points is
// exact; the sink computes them from the points otherwise. Ties at exactly eps (lattices),
// duplicates (distance 0), d past the grid's column kernels (9, 17), float32 input, self pairs,
// sorted and unsorted rows, A x B.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace epsjoin::test {
namespace {

struct distance_engine {
  std::string name;
  std::map<std::string, std::string> params = {};
  scalar_type precision = scalar_type::f64;
  /// What cpu-grid's "distances" note says (empty: another engine, no note).
  std::string note = {};
};

const std::vector<distance_engine>& engines() {
  static const std::vector<distance_engine> all = {
      {"brute-cpu"},
      {"cpu-grid", {}, scalar_type::f64, "with the rows"},
      {"cpu-grid", {{"fill", "halved"}, {"pattern", "unicomp"}}, scalar_type::f64,
       "with the rows"},
      {"cpu-grid", {{"layout", "rows"}}, scalar_type::f64, "with the rows"},
      {"cpu-grid", {{"pattern", "full"}, {"gather", "1"}}, scalar_type::f64, "with the rows"},
      {"cpu-grid", {}, scalar_type::f32},
      {"super-ego"},
      {"cpu-rtree"},
  };
  return all;
}

std::string label(const distance_engine& e) {
  std::string s = e.name;
  for (const auto& [k, v] : e.params) s += " " + k + "=" + v;
  return s + (e.precision == scalar_type::f32 ? " f32" : " f64");
}

struct distance_case {
  shape_kind kind;
  std::size_t n;
  std::size_t d;
  bool self = true;
};

std::vector<distance_case> cases() {
  return {{shape_kind::lattice, 900, 2},    {shape_kind::lattice, 400, 3},
          {shape_kind::duplicates, 500, 2}, {shape_kind::uniform, 1200, 2},
          {shape_kind::clusters, 700, 4},   {shape_kind::uniform, 600, 9},
          {shape_kind::clusters, 300, 17},  {shape_kind::skewed, 800, 1},
          {shape_kind::uniform, 0, 2},      {shape_kind::uniform, 1, 3},
          {shape_kind::lattice, 500, 2, false}, {shape_kind::uniform, 700, 5, false}};
}

// The distance as the contract states it, computed here independently of the library: this
// file is compiled for the baseline x86-64, whose compiler has no fused multiply-add to use.
double expected_distance(dataset_view a, std::size_t q, dataset_view b, std::size_t j) {
  double sum = 0;
  for (std::size_t k = 0; k < a.d; ++k) {
    const double diff = a.at(q, k) - b.at(j, k);
    sum += diff * diff;
  }
  return std::sqrt(sum);
}

// Each row's (neighbour, distance) in neighbour order, whatever order the table keeps.
std::vector<std::vector<std::pair<std::uint32_t, double>>> sorted_rows(const neighbor_table& t) {
  std::vector<std::vector<std::pair<std::uint32_t, double>>> rows(t.n_queries());
  for (std::size_t q = 0; q < t.n_queries(); ++q) {
    for (std::uint64_t k = t.offsets[q]; k < t.offsets[q + 1]; ++k) {
      rows[q].emplace_back(t.neighbors[k], t.distances[k]);
    }
    std::sort(rows[q].begin(), rows[q].end());
  }
  return rows;
}

dataset as_type(const dataset& points, scalar_type type) {
  return type == scalar_type::f64 ? dataset::to_f64(points.view()) : dataset::to_f32(points.view());
}

class table_distances : public testing::TestWithParam<std::size_t> {};

TEST_P(table_distances, equal_the_oracle_to_the_last_bit) {
  const distance_engine& e = engines()[GetParam()];
  std::uint64_t seed = test_seed();
  for (const distance_case& c : cases()) {
    for (const scalar_type input : {scalar_type::f64, scalar_type::f32}) {
      const dataset a = as_type(make_shape(c.kind, c.n, c.d, seed++), input);
      const dataset b =
          c.self ? dataset{} : as_type(make_shape(c.kind, c.n / 2 + 3, c.d, seed++), input);
      const dataset_view data = c.self ? a.view() : b.view();
      const double eps = c.kind == shape_kind::lattice ? 0.25
                         : a.n() < 2                  ? 0.1
                                                      : eps_for_selectivity(a.view(), data, 12);
      std::vector<index_pair> oracle = run_collect({"brute-cpu"}, a.view(), data, c.self, eps);
      for (const bool include_self : {false, true}) {
        std::vector<std::vector<std::pair<std::uint32_t, double>>> want(a.n());
        for (const index_pair& p : oracle) {
          want[p.query].emplace_back(p.neighbor, expected_distance(a.view(), p.query, data,
                                                                   p.neighbor));
        }
        if (c.self && include_self) {
          for (std::uint32_t q = 0; q < a.n(); ++q) want[q].emplace_back(q, 0.0);
        }
        for (auto& row : want) std::sort(row.begin(), row.end());
        for (const bool sorted : {false, true}) {
          for (const unsigned threads : {1u, 3u}) {
            SCOPED_TRACE(label(e) + ", " + to_string(c.kind) + " n " + std::to_string(c.n) +
                         " d " + std::to_string(c.d) + (c.self ? " self" : " AxB") + ", " +
                         std::string(to_string(input)) + " input" +
                         (include_self ? ", include_self" : "") + (sorted ? ", sorted" : "") +
                         ", threads " + std::to_string(threads) + ", seed " +
                         std::to_string(test_seed()));
            join_options opt;
            opt.eps = eps;
            opt.engine = e.name;
            opt.params = e.params;
            opt.precision = e.precision;
            opt.include_self = include_self;
            resources res(threads);
            csr_sink sink(sorted, 0, true);
            const join_stats stats = c.self ? self_join(res, a.view(), opt, sink)
                                            : join(res, a.view(), data, opt, sink);
            const neighbor_table& t = sink.table();
            ASSERT_EQ(t.n_queries(), a.n());
            ASSERT_EQ(t.distances.size(), t.neighbors.size());
            if (sorted) {
              for (std::size_t q = 0; q < t.n_queries(); ++q) {
                ASSERT_TRUE(std::is_sorted(t.neighbors.begin() + t.offsets[q],
                                           t.neighbors.begin() + t.offsets[q + 1]));
              }
            }
            const auto got = sorted_rows(t);
            for (std::size_t q = 0; q < a.n(); ++q) {
              ASSERT_EQ(got[q].size(), want[q].size()) << "row " << q;
              for (std::size_t k = 0; k < got[q].size(); ++k) {
                ASSERT_EQ(got[q][k].first, want[q][k].first) << "row " << q;
                // Bit for bit: EXPECT_EQ on doubles compares exactly.
                ASSERT_EQ(got[q][k].second, want[q][k].second)
                    << "row " << q << ", neighbour " << got[q][k].first;
              }
            }
            if (!e.note.empty() && oracle.size() > 0) {
              EXPECT_EQ(note_of(stats, "distances"), e.note);
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(engines, table_distances, testing::Range<std::size_t>(0, 8),
                         [](const testing::TestParamInfo<std::size_t>& param) {
                           std::string name = label(engines()[param.param]);
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name + "_" + std::to_string(param.param);
                         });

TEST(table_distances, of_a_prefix_of_the_rows) {
  // self_join_rows: the first rows of a self-join, whose sink sees a join of those points
  // against all of them.
  const dataset a = make_shape(shape_kind::lattice, 600, 2, test_seed());
  join_options opt;
  opt.eps = 0.25;
  for (const bool include_self : {false, true}) {
    opt.include_self = include_self;
    resources res(2);
    csr_sink sink(true, 0, true);
    self_join_rows(res, a.view(), 200, opt, sink);
    const neighbor_table& t = sink.table();
    ASSERT_EQ(t.n_queries(), 200u);
    ASSERT_EQ(t.distances.size(), t.neighbors.size());
    std::uint64_t ties = 0;
    for (std::size_t q = 0; q < 200; ++q) {
      for (std::uint64_t k = t.offsets[q]; k < t.offsets[q + 1]; ++k) {
        const double want = expected_distance(a.view(), q, a.view(), t.neighbors[k]);
        ASSERT_EQ(t.distances[k], want) << "row " << q << ", neighbour " << t.neighbors[k];
        ASSERT_LE(want, 0.25);
        ties += want == 0.25;
      }
    }
    EXPECT_GT(ties, 0u);  // the lattice puts neighbours at exactly eps
  }
}

TEST(table_distances, are_refused_outside_the_euclidean_metric_and_periodic_boxes) {
  const dataset a = make_shape(shape_kind::uniform, 50, 2, test_seed());
  resources res(1);
  join_options opt;
  opt.eps = 0.2;
  opt.metric = distance_metric::manhattan;
  csr_sink manhattan(false, 0, true);
  EXPECT_THROW(self_join(res, a.view(), opt, manhattan), invalid_argument);
  opt.metric = distance_metric::euclidean;
  opt.box = {1.0, 1.0};
  csr_sink periodic(false, 0, true);
  EXPECT_THROW(self_join(res, a.view(), opt, periodic), invalid_argument);
}

TEST(table_distances, are_kept_with_the_memory_they_take) {
  // 8 bytes a pair more than the table: a limit the table alone fits but not with them.
  const dataset a = make_shape(shape_kind::uniform, 4000, 2, test_seed());
  join_options opt;
  opt.eps = eps_for_selectivity(a.view(), a.view(), 200);
  resources res(1);
  csr_sink plain;
  const join_stats s = self_join(res, a.view(), opt, plain);
  const std::uint64_t table_bytes = s.pairs * 4 + (a.n() + 1) * 8;
  memory_limits limits;
  limits.host_bytes = table_bytes + s.pairs * 4 + (std::uint64_t{2} << 20);
  res.set_memory(limits);
  csr_sink fits;
  EXPECT_NO_THROW(self_join(res, a.view(), opt, fits));
  csr_sink with_distances(false, 0, true);
  EXPECT_THROW(self_join(res, a.view(), opt, with_distances), out_of_memory);
}

}  // namespace
}  // namespace epsjoin::test
