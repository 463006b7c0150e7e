// DBSCAN (epsjoin::dbscan) on every CPU engine against a brute-force DBSCAN written here: its own
// distance, its own neighbour lists, a breadth-first search over the core points. Because the
// border rule (the core neighbour of smallest index) and the numbering (clusters in the order of
// their smallest core point, as scikit-learn's) are fixed, the whole label vector must match,
// which covers the core points, the noise, the clusters as partitions of the core points and
// every border point's cluster at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <vector>

#include "cluster/dbscan_sinks.hpp"
#include "epsjoin/dbscan.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/join.hpp"
#include "support/harness.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"
#include "results/handover.hpp"

namespace {

using namespace epsjoin;

double squared_distance(dataset_view v, std::size_t i, std::size_t j) {
  double s = 0;
  for (std::size_t k = 0; k < v.d; ++k) {
    const double diff = v.at(i, k) - v.at(j, k);
    s += diff * diff;
  }
  return s;
}

struct expected_clustering {
  std::vector<std::int64_t> labels;
  std::vector<std::uint8_t> core;
  std::size_t clusters = 0, n_core = 0, n_border = 0, n_noise = 0;
};

expected_clustering brute_dbscan(dataset_view v, double eps, std::size_t min_samples) {
  const std::size_t n = v.n;
  std::vector<std::vector<std::size_t>> near(n);  // self included
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (squared_distance(v, i, j) <= eps * eps) near[i].push_back(j);
    }
  }
  expected_clustering e;
  e.core.resize(n);
  for (std::size_t i = 0; i < n; ++i) e.core[i] = near[i].size() >= min_samples;
  // Components of the core points, by breadth-first search.
  std::vector<std::int64_t> component(n, -1);
  std::int64_t components = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (!e.core[s] || component[s] >= 0) continue;
    std::deque<std::size_t> todo{s};
    component[s] = components;
    while (!todo.empty()) {
      const std::size_t p = todo.front();
      todo.pop_front();
      for (std::size_t q : near[p]) {
        if (e.core[q] && component[q] < 0) {
          component[q] = components;
          todo.push_back(q);
        }
      }
    }
    ++components;
  }
  // Border points take the component of their smallest core neighbour (near[i] is ascending).
  std::vector<std::int64_t> cluster(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (e.core[i]) {
      cluster[i] = component[i];
      ++e.n_core;
      continue;
    }
    for (std::size_t q : near[i]) {
      if (e.core[q]) {
        cluster[i] = component[q];
        break;
      }
    }
    ++(cluster[i] >= 0 ? e.n_border : e.n_noise);
  }
  // Numbered by the first appearance of a core point in input order.
  std::vector<std::int64_t> number(static_cast<std::size_t>(components), -1);
  e.labels.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (!e.core[i]) continue;
    std::int64_t& k = number[static_cast<std::size_t>(cluster[i])];
    if (k < 0) k = static_cast<std::int64_t>(e.clusters++);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (cluster[i] >= 0) e.labels[i] = number[static_cast<std::size_t>(cluster[i])];
  }
  return e;
}

testing::AssertionResult same_clustering(const expected_clustering& e, const dbscan_result& r) {
  if (r.labels.size() != e.labels.size() || r.core.size() != e.core.size()) {
    return testing::AssertionFailure() << r.labels.size() << " labels and " << r.core.size()
                                       << " core flags for " << e.labels.size() << " points";
  }
  for (std::size_t i = 0; i < e.labels.size(); ++i) {
    if (r.core[i] != e.core[i] || r.labels[i] != e.labels[i]) {
      return testing::AssertionFailure()
             << "point " << i << ": label " << r.labels[i] << (r.core[i] ? " core" : " non-core")
             << ", expected " << e.labels[i] << (e.core[i] ? " core" : " non-core");
    }
  }
  if (r.n_clusters != e.clusters || r.n_core != e.n_core || r.n_border != e.n_border ||
      r.n_noise != e.n_noise) {
    return testing::AssertionFailure()
           << "counts (clusters, core, border, noise) " << r.n_clusters << ", " << r.n_core << ", "
           << r.n_border << ", " << r.n_noise << "; expected " << e.clusters << ", " << e.n_core
           << ", " << e.n_border << ", " << e.n_noise;
  }
  return testing::AssertionSuccess();
}

// "NAME/pairs": the engine with the cell merge off, so that cpu-grid's two joins are tested
// as well as its cells.
constexpr const char* pairs_suffix = "/pairs";

std::vector<std::string> cpu_engines() {
  std::vector<std::string> names;
  for (const engine_info& e : engines()) {
    if (e.processor == "cpu" && e.available) names.push_back(e.name);
  }
  names.push_back(std::string("cpu-grid") + pairs_suffix);
  return names;
}

dbscan_result run(const std::string& engine, const dataset& points, double eps,
                  std::size_t min_samples, scalar_type precision = scalar_type::f64,
                  unsigned threads = 3) {
  resources res(threads);
  dbscan_options opt;
  opt.engine = engine;
  opt.precision = precision;
  if (engine.ends_with(pairs_suffix)) {
    opt.engine = engine.substr(0, engine.size() - std::string_view(pairs_suffix).size());
    opt.cell_merge = false;
  }
  return dbscan(res, points, eps, min_samples, opt);
}

class dbscan_oracle : public testing::TestWithParam<std::string> {};

TEST_P(dbscan_oracle, matches_brute_force_on_random_shapes) {
  const std::string engine = GetParam();
  const std::uint64_t seed = test::test_seed();
  using k = test::shape_kind;
  for (k kind : {k::uniform, k::clusters, k::skewed}) {
    for (std::size_t d : {1, 2, 3, 5, 8, 16}) {
      const std::size_t n = kind == k::uniform ? 300 : 450;
      const dataset base = test::make_shape(kind, n, d, seed);
      for (scalar_type type : {scalar_type::f64, scalar_type::f32}) {
        const dataset points = type == scalar_type::f32 ? dataset::to_f32(base.view()) : base;
        const test::engine_config config{engine, {}, type};
        const double band = test::error_band(config, d);
        for (double selectivity : {2.0, 8.0, 30.0}) {
          const double eps = test::eps_clear_of_pairs(
              points.view(), test::eps_for_selectivity(points.view(), points.view(), selectivity),
              band);
          for (std::size_t min_samples : {1, 4, 10}) {
            SCOPED_TRACE(testing::Message()
                         << engine << " " << test::to_string(kind) << " d=" << d << " "
                         << to_string(type) << " eps=" << eps << " min_samples=" << min_samples
                         << " seed=" << seed);
            const expected_clustering e = brute_dbscan(points.view(), eps, min_samples);
            ASSERT_TRUE(same_clustering(e, run(engine, points, eps, min_samples, type)));
          }
        }
      }
    }
  }
}

TEST_P(dbscan_oracle, ties_at_exactly_eps) {
  // Lattice points at distance exactly eps (multiples of 0.25, exact in binary): a point with its
  // neighbours at exactly eps is core only if `<=` is honoured everywhere.
  const std::string engine = GetParam();
  for (std::size_t d : {1, 2, 3}) {
    for (scalar_type type : {scalar_type::f64, scalar_type::f32}) {
      dataset points = test::make_shape(test::shape_kind::lattice, 400, d, test::test_seed());
      if (type == scalar_type::f32) points = dataset::to_f32(points.view());
      for (std::size_t min_samples : {std::size_t{2}, std::size_t{3}, std::size_t{5}, 2 * d + 1}) {
        SCOPED_TRACE(testing::Message() << engine << " d=" << d << " " << to_string(type)
                                        << " min_samples=" << min_samples);
        const expected_clustering e = brute_dbscan(points.view(), 0.25, min_samples);
        ASSERT_TRUE(same_clustering(e, run(engine, points, 0.25, min_samples, type)));
      }
    }
  }
  // A full 2-D integer grid at eps 1: interior points have 4 neighbours at exactly eps (core with
  // min_samples 5), edge points 3 and corners 2 (border points).
  std::vector<double> grid;
  for (int x = 0; x < 12; ++x) {
    for (int y = 0; y < 9; ++y) grid.insert(grid.end(), {double(x), double(y)});
  }
  const dataset lattice(std::move(grid), 2);
  const expected_clustering e = brute_dbscan(lattice.view(), 1.0, 5);
  EXPECT_EQ(e.n_core, 10u * 7u);
  EXPECT_EQ(e.clusters, 1u);
  EXPECT_TRUE(same_clustering(e, run(engine, lattice, 1.0, 5)));
}

TEST_P(dbscan_oracle, contract_cases) {
  const std::string engine = GetParam();
  // N = 0.
  const dataset none(0, 3);
  const dbscan_result empty = run(engine, none, 0.5, 3);
  EXPECT_TRUE(empty.labels.empty() && empty.core.empty());
  EXPECT_EQ(empty.n_clusters + empty.n_core + empty.n_border + empty.n_noise, 0u);
  // N = 1: a cluster of its own with min_samples 1, noise otherwise.
  const dataset one(std::vector<double>{0.5, 0.25}, 2);
  EXPECT_TRUE(same_clustering(brute_dbscan(one.view(), 0.1, 1), run(engine, one, 0.1, 1)));
  EXPECT_EQ(run(engine, one, 0.1, 1).labels, std::vector<std::int64_t>{0});
  EXPECT_EQ(run(engine, one, 0.1, 2).labels, std::vector<std::int64_t>{-1});
  // All points identical: all core at min_samples = N, all noise at N + 1.
  const dataset same(std::vector<double>(60 * 4, 0.125), 4);
  const dbscan_result all = run(engine, same, 1e-9, 60);
  EXPECT_EQ(all.n_core, 60u);
  EXPECT_EQ(all.n_clusters, 1u);
  EXPECT_EQ(run(engine, same, 1e-9, 61).n_noise, 60u);
  // min_samples 1: every point core; clusters are the eps-graph's components.
  const dataset pts = test::make_shape(test::shape_kind::clusters, 500, 2, test::test_seed());
  const double eps = test::eps_clear_of_pairs(pts.view(), 0.01, 1e-12);
  const dbscan_result each = run(engine, pts, eps, 1);
  EXPECT_EQ(each.n_core, 500u);
  EXPECT_TRUE(same_clustering(brute_dbscan(pts.view(), eps, 1), each));
  // eps beyond the data's diameter: one cluster of everything.
  const dbscan_result whole = run(engine, pts, 10.0, 20);
  EXPECT_EQ(whole.n_clusters, 1u);
  EXPECT_EQ(whole.labels, std::vector<std::int64_t>(500, 0));
  // One thread and many give the same labels (the rules leave no choice to the schedule).
  EXPECT_EQ(run(engine, pts, eps, 4, scalar_type::f64, 1).labels,
            run(engine, pts, eps, 4, scalar_type::f64, 4).labels);
}

INSTANTIATE_TEST_SUITE_P(cpu, dbscan_oracle, testing::ValuesIn(cpu_engines()),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

TEST(dbscan, rejects_bad_arguments) {
  const dataset pts = test::make_shape(test::shape_kind::uniform, 10, 2, 1);
  resources res(1);
  EXPECT_THROW(dbscan(res, pts, 0.0, 3), invalid_argument);
  EXPECT_THROW(dbscan(res, pts, std::nan(""), 3), invalid_argument);
  EXPECT_THROW(dbscan(res, pts, 0.1, 0), invalid_argument);
  dbscan_options unknown;
  unknown.engine = "no-such-engine";
  EXPECT_THROW(dbscan(res, pts, 0.1, 3, unknown), invalid_argument);
  std::vector<double> bad(20, 0.5);
  bad[7] = std::nan("");
  const dataset with_nan(std::move(bad), 2);
  EXPECT_THROW(dbscan(res, with_nan, 0.1, 3), invalid_argument);
  // The cell merge names the coordinate as the joins do.
  dbscan_options grid;
  grid.engine = "cpu-grid";
  try {
    dbscan(res, with_nan, 0.1, 3, grid);
    ADD_FAILURE() << "a NaN coordinate was accepted";
  } catch (const invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("point 3, dimension 1"), std::string::npos) << e.what();
  }
  // The memory limit holds DBSCAN's own arrays too.
  res.set_memory({64, 0});
  EXPECT_THROW(dbscan(res, pts, 0.1, 3), out_of_memory);
}

TEST(dbscan, reports_stages_engine_and_pairs) {
  const dataset pts = test::make_shape(test::shape_kind::clusters, 400, 3, 3);
  resources res(2);
  for (const std::string engine : {"auto", "cpu-grid", "super-ego"}) {
    for (bool cells : {true, false}) {
      SCOPED_TRACE(engine + (cells ? " cells" : " pairs"));
      dbscan_options o;
      o.engine = engine;
      o.cell_merge = cells;
      const dbscan_result r = dbscan(res, pts, 0.02, 5, o);
      EXPECT_FALSE(r.engine.empty());
      EXPECT_NE(r.engine, "auto");
      std::vector<std::string> names;
      for (const stage_time& s : r.stages) names.push_back(s.name);
      EXPECT_EQ(names, (std::vector<std::string>{"count", "merge", "label"}));
      EXPECT_GT(r.seconds, 0.0);
      if (r.merge == "cells") {
        // No CUDA device here: auto is cpu-grid, which clusters on its cells in 3-D.
        EXPECT_TRUE(cells && engine != "super-ego");
        EXPECT_EQ(r.engine, "cpu-grid");
        EXPECT_EQ(r.pairs, 0u);  // its counts stop at min_samples
        continue;
      }
      EXPECT_EQ(r.merge, "host");
      join_options opt;
      opt.eps = 0.02;
      count_sink counter;
      EXPECT_EQ(r.pairs, self_join(res, pts.view(), opt, counter).pairs);
    }
  }
}

// The cell merge on every shape of the test generators (duplicates, lattices at exactly eps,
// large offsets, data embedded in a subspace) in 1-3 dimensions, on enough points for many
// chunks of cells on several threads, and where it hands over to the joins.
TEST(dbscan, cell_merge_matches_brute_force_on_every_shape) {
  const std::uint64_t seed = test::test_seed();
  using k = test::shape_kind;
  for (k kind : {k::uniform, k::clusters, k::skewed, k::duplicates, k::lattice, k::embedded,
                 k::offset}) {
    for (std::size_t d : {1, 2, 3}) {
      const scalar_type type =
          (d + static_cast<std::size_t>(kind)) % 2 ? scalar_type::f32 : scalar_type::f64;
      dataset points = test::make_shape(kind, 1500, d, seed);
      if (type == scalar_type::f32) points = dataset::to_f32(points.view());
      for (double selectivity : {3.0, 25.0}) {
        const double eps =
            kind == k::lattice
                ? 0.25 * selectivity / 3.0
                : test::eps_for_selectivity(points.view(), points.view(), selectivity);
        for (std::size_t min_samples : {1, 4, 12}) {
          SCOPED_TRACE(testing::Message() << test::to_string(kind) << " d=" << d << " "
                                          << to_string(type) << " eps=" << eps
                                          << " min_samples=" << min_samples << " seed=" << seed);
          const expected_clustering e = brute_dbscan(points.view(), eps, min_samples);
          for (unsigned threads : {1u, 4u}) {
            const dbscan_result r = run("cpu-grid", points, eps, min_samples, type, threads);
            EXPECT_EQ(r.merge, "cells");
            ASSERT_TRUE(same_clustering(e, r));
          }
        }
      }
    }
  }
  // Beyond 2^24 cells along a dimension (the cell coordinates would lose exactness), and in 4-D,
  // cpu-grid runs the two joins.
  std::vector<double> far = {0.0, 0.0, 1e-9, 0.0, 5e-10, 1e-9, 1.0, 1.0};
  const dataset spread(std::move(far), 2);
  const dbscan_result r = run("cpu-grid", spread, 1e-9, 2);
  EXPECT_EQ(r.merge, "host");
  EXPECT_TRUE(same_clustering(brute_dbscan(spread.view(), 1e-9, 2), r));
  const dataset four = test::make_shape(k::clusters, 300, 4, seed);
  EXPECT_EQ(run("cpu-grid", four, 0.05, 4).merge, "host");
}

// A GPU engine hands over batches of millions of pairs from one thread; the merge sink splits
// them over its threads. One batch of every ordered pair of a point set must give the oracle's
// core components and border points.
void check_merge_sink_on_one_huge_batch(bool unordered) {
  const dataset pts = test::make_shape(test::shape_kind::clusters, 1500, 2, test::test_seed());
  const double eps = test::eps_clear_of_pairs(pts.view(), 0.012, 1e-12);
  const expected_clustering e = brute_dbscan(pts.view(), eps, 6);
  std::vector<index_pair> pairs;
  for (std::uint32_t i = 0; i < 1500; ++i) {
    for (std::uint32_t j = 0; j < 1500; ++j) {
      if (i != j) pairs.push_back({i, j});  // every pair: the sink is told only what is near
    }
  }
  ASSERT_GE(pairs.size(), std::size_t{1} << 21);
  // Keep the pairs within eps, in one batch, in a shuffled order.
  std::erase_if(pairs, [&](const index_pair& p) {
    return squared_distance(pts.view(), p.query, p.neighbor) > eps * eps;
  });
  std::shuffle(pairs.begin(), pairs.end(), std::mt19937_64(test::test_seed()));
  while (pairs.size() < (std::size_t{1} << 21)) {
    pairs.insert(pairs.end(), pairs.begin(), pairs.end());
  }
  std::vector<std::uint32_t> parent(1500), min_core(1500, detail::no_core);
  for (std::uint32_t i = 0; i < 1500; ++i) {
    parent[i] = e.core[i] ? i : detail::concurrent_union_find::not_member;
  }
  detail::concurrent_union_find sets(parent);
  detail::core_merge_sink sink(sets, min_core, 4);
  if (unordered) {
    // Each unordered pair once, as (min, max), as cpu-grid and super-ego hand them over.
    std::erase_if(pairs, [](const index_pair& p) { return p.query > p.neighbor; });
    ASSERT_GE(pairs.size(), std::size_t{1} << 20);
    epsjoin::detail::hand_unordered(sink, pairs);
  } else {
    sink.consume(pairs);
  }
  for (std::size_t i = 0; i < 1500; ++i) {
    for (std::size_t j = 0; j < 1500; ++j) {
      if (e.core[i] && e.core[j]) {
        ASSERT_EQ(e.labels[i] == e.labels[j], sets.find(i) == sets.find(j)) << i << " " << j;
      }
    }
    if (!e.core[i] && e.labels[i] >= 0) {
      ASSERT_NE(min_core[i], detail::no_core) << i;
      ASSERT_EQ(e.labels[min_core[i]], e.labels[i]) << i;
    }
    if (e.labels[i] < 0) {
      ASSERT_EQ(min_core[i], detail::no_core) << i;
    }
  }
}

// The cell merge reports its progress through its loops, and a callback that throws (Python's
// Ctrl-C) ends the run with that exception.
TEST(dbscan, cell_merge_reports_progress_and_stops_on_an_exception) {
  const dataset pts = test::make_shape(test::shape_kind::skewed, 20000, 2, test::test_seed());
  resources res(2);
  dbscan_options o;
  o.engine = "cpu-grid";
  std::vector<double> seen;
  std::mutex m;
  o.progress = [&](double f) {
    std::lock_guard lock(m);
    seen.push_back(f);
  };
  EXPECT_EQ(dbscan(res, pts, 0.002, 5, o).merge, "cells");
  ASSERT_GE(seen.size(), 4u);  // after the grid and each of the three loops at least
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GT(seen.front(), 0.0);
  EXPECT_EQ(seen.back(), 1.0);
  struct stop {};
  int calls = 0;
  o.progress = [&](double f) {
    if (f > 0.1 && ++calls == 1) throw stop{};
  };
  EXPECT_THROW(dbscan(res, pts, 0.002, 5, o), stop);
}

TEST(dbscan, merge_sink_splits_one_huge_batch) { check_merge_sink_on_one_huge_batch(false); }

TEST(dbscan, merge_sink_splits_one_huge_unordered_batch) {
  check_merge_sink_on_one_huge_batch(true);
}

}  // namespace
