// pairs_array_sink against the oracle through its three paths: pairs written in place by the
// join's threads (unsorted), collected and grouped by i (sorted, one thread), and a table's rows
// cut (sorted on several threads, or `pairs_once` off); for the engines that find each pair once
// (cpu-grid's halved patterns, super-ego), hand over pairs (brute-cpu, cpu-rtree) or fill rows
// (cpu-grid's FULL pattern). Ties at exactly eps (lattices, and uniform points whose eps is one
// pair's distance, which cpu-grid and super-ego in float64 once decided by their own rounding),
// duplicates, N = 0, 1, A x B, self pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "epsjoin/join.hpp"
#include "epsjoin/pairs_array.hpp"
#include "support/harness.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace epsjoin::test {
namespace {

struct pairs_engine {
  std::string name;
  std::map<std::string, std::string> params = {};
};

const std::vector<pairs_engine>& engines() {
  static const std::vector<pairs_engine> all = {
      {"brute-cpu"},
      {"cpu-grid"},
      {"cpu-grid", {{"pattern", "full"}}},
      {"cpu-grid", {{"fill", "halved"}, {"pattern", "unicomp"}}},
      {"super-ego"},
      {"cpu-rtree"},
  };
  return all;
}

std::string label(const pairs_engine& e) {
  std::string s = e.name;
  for (const auto& [k, v] : e.params) s += "_" + k + "_" + v;
  for (char& ch : s) {
    if (ch == '-') ch = '_';
  }
  return s;
}

struct pairs_case {
  shape_kind kind;
  std::size_t n;
  std::size_t d;
  bool self = true;
};

using pair_list = std::vector<std::pair<std::int64_t, std::int64_t>>;

pair_list pairs_of(pairs_array& a) {
  pair_list out(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) out[k] = {a.data()[2 * k], a.data()[2 * k + 1]};
  return out;
}

class pairs_array_paths : public testing::TestWithParam<std::size_t> {};

TEST_P(pairs_array_paths, give_the_oracle_pairs) {
  const pairs_engine& e = engines()[GetParam()];
  std::uint64_t seed = test_seed();
  const std::vector<pairs_case> cases = {
      {shape_kind::lattice, 900, 2},    {shape_kind::duplicates, 400, 3},
      {shape_kind::uniform, 3000, 2},   {shape_kind::uniform, 0, 2},
      {shape_kind::uniform, 1, 2},      {shape_kind::lattice, 600, 2, false}};
  for (const pairs_case& c : cases) {
    const dataset a = make_shape(c.kind, c.n, c.d, seed++);
    const dataset b = c.self ? dataset{} : make_shape(c.kind, c.n / 2 + 3, c.d, seed++);
    const dataset_view data = c.self ? a.view() : b.view();
    const double eps = c.kind == shape_kind::lattice ? 0.25
                       : a.n() < 2                  ? 0.1
                                                    : eps_for_selectivity(a.view(), data, 12);
    const std::vector<index_pair> oracle = run_collect({"brute-cpu"}, a.view(), data, c.self, eps);
    for (const bool include_self : {false, true}) {
      if (!c.self && include_self) continue;
      pair_list want;
      for (const index_pair& p : oracle) {
        if (!c.self || p.query < p.neighbor) want.emplace_back(p.query, p.neighbor);
      }
      if (include_self) {
        for (std::int64_t q = 0; q < static_cast<std::int64_t>(a.n()); ++q) want.emplace_back(q, q);
      }
      std::sort(want.begin(), want.end());
      for (const bool sort : {false, true}) {
        for (const bool once : {true, false}) {
          for (const unsigned threads : {1u, 3u}) {
            SCOPED_TRACE(label(e) + ", " + to_string(c.kind) + " n " + std::to_string(c.n) +
                         (c.self ? " self" : " AxB") + (include_self ? " +self" : "") +
                         (sort ? ", sorted" : "") + (once ? "" : ", rows only") + ", threads " +
                         std::to_string(threads) + ", seed " + std::to_string(test_seed()));
            join_options opt;
            opt.eps = eps;
            opt.engine = e.name;
            opt.params = e.params;
            opt.include_self = include_self;
            resources res(threads);
            pairs_array_sink sink({.self_join = c.self, .sort = sort, .threads = threads,
                                   .pairs_once = once});
            if (c.self) {
              self_join(res, a.view(), opt, sink);
            } else {
              join(res, a.view(), data, opt, sink);
            }
            pair_list got = pairs_of(*sink.release());
            if (!sort) std::sort(got.begin(), got.end());
            ASSERT_EQ(got.size(), want.size());
            EXPECT_TRUE(got == want);
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(engines, pairs_array_paths, testing::Range<std::size_t>(0, 6),
                         [](const testing::TestParamInfo<std::size_t>& param) {
                           return label(engines()[param.param]) + "_" +
                                  std::to_string(param.param);
                         });

TEST(pairs_array, refuses_a_join_of_another_kind_and_a_second_release) {
  const dataset a = make_shape(shape_kind::uniform, 50, 2, test_seed());
  resources res(1);
  join_options opt;
  opt.eps = 0.2;
  pairs_array_sink ab({.self_join = false});
  EXPECT_THROW(self_join(res, a.view(), opt, ab), invalid_argument);
  pairs_array_sink self({.self_join = true});
  self_join(res, a.view(), opt, self);
  EXPECT_NE(self.release(), nullptr);
  EXPECT_THROW(self.release(), invalid_argument);
}

}  // namespace
}  // namespace epsjoin::test
