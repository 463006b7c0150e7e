// The result estimate that refuses, before the work, a result far over the memory limit
// (core/result_estimate.hpp). What matters most: it never refuses a result that fits. Its lower
// bound is tested against true totals over populations where a few members dominate, and the
// whole estimate against every CPU engine's own count over the test shapes (ties at exactly eps
// included), with samples far smaller than the library's so that its variance is at its worst.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/result_estimate.hpp"
#include "epsjoin/epsjoin.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace epsjoin::detail {
namespace {

using test::shape_kind;

// A population's values, and many uniform samples of distinct members: the bound must stay
// below the true total in every draw.
int draws_above_the_total(const std::vector<std::uint64_t>& population, std::size_t sample,
                          int draws, std::uint64_t seed) {
  const double total =
      std::accumulate(population.begin(), population.end(), 0.0,
                      [](double a, std::uint64_t b) { return a + static_cast<double>(b); });
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> order(population.size());
  std::iota(order.begin(), order.end(), 0u);
  int above = 0;
  std::vector<std::uint64_t> counts(sample);
  for (int t = 0; t < draws; ++t) {
    // A partial Fisher-Yates shuffle: the first `sample` are a uniform sample without replacement.
    for (std::size_t k = 0; k < sample; ++k) {
      std::swap(order[k], order[k + rng() % (order.size() - k)]);
      counts[k] = population[order[k]];
    }
    if (total_lower_bound(counts, population.size(), 6) > total) ++above;
  }
  return above;
}

TEST(result_estimate, lower_bound_of_equal_values_is_their_total) {
  const std::vector<std::uint64_t> counts(50, 7);
  EXPECT_DOUBLE_EQ(total_lower_bound(counts, 1000, 6), 7000.0);
  EXPECT_EQ(total_lower_bound({}, 1000, 6), 0.0);
}

TEST(result_estimate, lower_bound_is_never_below_the_sample_itself) {
  // One dense member among empty ones: the scaled mean less six errors is negative, but the
  // sample's own pairs are part of the result.
  std::vector<std::uint64_t> counts(64, 0);
  counts[5] = 100000;
  EXPECT_DOUBLE_EQ(total_lower_bound(counts, 1'000'000, 6), 100000.0);
}

TEST(result_estimate, lower_bound_stays_below_the_total_where_few_members_dominate) {
  const std::uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  const std::size_t n = 20000;
  struct population_case {
    std::string name;
    std::vector<std::uint64_t> values;
  };
  std::vector<population_case> cases;
  // A dense cluster of c members, each with c neighbours, among sparse ones: the cluster holds
  // most of the pairs, and a sample of 64 meets it about 64 c / n times.
  for (std::size_t c : {5u, 50u, 300u, 1000u, 4000u}) {
    std::vector<std::uint64_t> v(n, 1);
    for (std::size_t i = 0; i < c; ++i) v[rng() % n] = c;
    cases.push_back({"cluster " + std::to_string(c), v});
  }
  // Heavy tails: Pareto with shape 1.1 (a finite mean, an infinite variance).
  std::vector<std::uint64_t> pareto(n);
  for (auto& x : pareto) {
    const double u = (static_cast<double>(rng() >> 11) + 1) * 0x1.0p-53;
    x = static_cast<std::uint64_t>(std::min(1e12, 10 * std::pow(u, -1 / 1.1)));
  }
  cases.push_back({"pareto", pareto});
  // Plain Poisson-like counts, where the bound should be close to the total.
  std::poisson_distribution<int> poisson(50);
  std::vector<std::uint64_t> plain(n);
  for (auto& x : plain) x = static_cast<std::uint64_t>(poisson(rng));
  cases.push_back({"poisson", plain});
  for (const population_case& c : cases) {
    for (std::size_t sample : {48u, 128u, 512u}) {
      EXPECT_EQ(draws_above_the_total(c.values, sample, 3000, seed + sample), 0)
          << c.name << ", samples of " << sample << " (seed " << seed << ")";
    }
  }
}

TEST(result_estimate, footprint_is_the_fewest_bytes_the_join_checks_ask) {
  // A CSR kept in memory: rows in place (offsets, 4 bytes an id) or pairs collected (12 bytes).
  const result_footprint csr{1000, 0, true, 12, 0};
  EXPECT_EQ(csr.bytes(10), 120u);                     // fewer pairs than rows: as pairs
  EXPECT_EQ(csr.bytes(100000), 1001u * 8 + 400000u);  // many: as rows
  EXPECT_STREQ(csr.what(), "the neighbour table");
  // Self slots are ids of the table (the pairs path adds its self pairs unchecked).
  const result_footprint with_self{1000, 1000, true, 12, 8};
  EXPECT_EQ(with_self.bytes(100000), 1001u * 8 + 101000u * 12);
  EXPECT_STREQ(with_self.what(), "the neighbour table and the arrays made from it");
  // Unique pairs are never rows; a sink that keeps nothing a pair bounds nothing.
  EXPECT_EQ((result_footprint{1000, 0, false, 4, 0}).bytes(100000), 400000u);
  EXPECT_STREQ((result_footprint{1000, 0, false, 4, 0}).what(), "the result");
  EXPECT_EQ((result_footprint{1000, 0, true, 0, 0}).bytes(1e12), 0u);
}

TEST(result_estimate, sample_radius_lies_below_every_band) {
  join_options o;
  o.eps = 0.5;
  EXPECT_LT(sample_eps(o, 3, 1e-12, 1e6), 0.5 * (1 - 1e-10));
  EXPECT_GT(sample_eps(o, 3, 1e-12, 1e6), 0.5 * (1 - 1e-8));  // float64: coordinates are exact
  o.precision = scalar_type::f32;
  EXPECT_LT(sample_eps(o, 3, 1e-12, 1), 0.5 * (1 - 7 * 1.2e-7 * 4));
  // Points near 1e6 rounded to float32 move by up to 0.05 each (sqrt(3) 1e6 2^-24).
  EXPECT_LT(sample_eps(o, 3, 1e-12, 1e6), 0.5 - 4 * 0.1);
  EXPECT_EQ(sample_eps(o, 3, 1e-12, 1e7), 0.0);
  o.metric = distance_metric::cosine;
  EXPECT_EQ(sample_eps(o, 3, 1e-12, 1), 0.0);
  o.precision = scalar_type::f64;
  o.eps = 1e-17;  // below what 1 - cos resolves: no radius to count at
  EXPECT_EQ(sample_eps(o, 3, 1e-12, 1), 0.0);
}

// Small samples on small inputs (the library's are 4096 queries from 65536), so the sample's
// variance is at its worst.
estimate_settings small_settings(std::size_t gate_points) {
  estimate_settings s;
  s.sample_queries = 48;
  s.queries_per_sample = 4;
  s.gate_points = gate_points;
  return s;
}

struct estimated_join {
  dataset_view queries, data;
  bool self;
  join_options options;
};

// What the join's checks will need, from the engine's own count of its pairs.
std::uint64_t needed_bytes(const estimated_join& j, const result_footprint& footprint) {
  resources res(2);
  count_sink counts;
  join_options o = j.options;
  o.include_self = false;
  if (j.self) {
    self_join(res, j.data, o, counts);
  } else {
    join(res, j.queries, j.data, o, counts);
  }
  return footprint.bytes(static_cast<double>(counts.total()));
}

// The estimate against a budget of exactly `limit` bytes; true when it refused.
bool refused(const estimated_join& j, const result_footprint& footprint, std::uint64_t limit,
             std::size_t gate_points) {
  resources res(2);
  const memory_budget budget({limit, 0}, {});
  join_stats stats;
  const engine* e = find_engine(j.options.engine);
  try {
    refuse_what_cannot_fit(res, j.queries, j.data, j.self, j.options, {"cpu-grid", e->error_band()},
                           footprint, budget, stats, small_settings(gate_points));
  } catch (const out_of_memory& error) {
    EXPECT_NE(std::string(error.what()).find("sampled queries"), std::string::npos) << error.what();
    return true;
  }
  return false;
}

TEST(result_estimate, never_refuses_a_result_that_fits_for_any_engine_or_shape) {
  const std::uint64_t seed = test::test_seed();
  for (std::uint64_t round = 0; round < 3; ++round) {
    for (shape_kind kind : {shape_kind::uniform, shape_kind::clusters, shape_kind::skewed,
                            shape_kind::duplicates, shape_kind::lattice, shape_kind::offset}) {
      const std::size_t d = 2 + round % 2;
      const dataset a = test::make_shape(kind, 1500 + 100 * round, d, seed + round);
      const dataset b = test::make_shape(kind, 900, d, seed + round + 100);
      const double eps = kind == shape_kind::lattice
                             ? 0.25  // the lattice's spacing: every neighbour at exactly eps
                             : test::eps_for_selectivity(a.view(), a.view(), 20);
      for (const char* engine : {"cpu-grid", "super-ego", "cpu-rtree", "brute-cpu"}) {
        for (scalar_type precision : {scalar_type::f64, scalar_type::f32}) {
          for (bool self : {true, false}) {
            SCOPED_TRACE(testing::Message()
                         << engine << " " << test::to_string(kind) << " d " << d
                         << (self ? " self" : " AxB") << " f"
                         << (precision == scalar_type::f32 ? 32 : 64) << " seed " << seed + round);
            join_options o;
            o.eps = eps;
            o.engine = engine;
            o.precision = precision;
            const estimated_join j{a.view(), self ? a.view() : b.view(), self, o};
            const result_footprint table{a.n(), 0, true, 12, 0};
            const std::uint64_t needed = needed_bytes(j, table);
            // Exactly what the table needs, through the rough gate and without it.
            EXPECT_FALSE(refused(j, table, needed, 300));
            EXPECT_FALSE(refused(j, table, needed, 1u << 20));
            const result_footprint pairs{a.n(), 0, false, 4, 0};
            EXPECT_FALSE(refused(j, pairs, needed_bytes(j, pairs), 1u << 20));
            // Not a vacuous test: ten times over, uniform points are refused by the estimate
            // (ties at exactly eps are not counted; a few dense points may hold the rest).
            if (kind == shape_kind::uniform) {
              EXPECT_TRUE(refused(j, table, needed / 10, 1u << 20));
              EXPECT_TRUE(refused(j, table, needed / 10, 300));  // through the rough gate
            }
          }
        }
      }
    }
  }
}

// A sparse background and one dense blob that holds most of the pairs: a sample that meets the
// blob more often than its share must still not be scaled up past the truth. The background's
// size changes the library's sample (its seed follows the number of queries).
TEST(result_estimate, a_dense_blob_that_holds_most_pairs_is_not_overestimated) {
  std::mt19937_64 rng(test::test_seed());
  int blob_met = 0;
  for (std::size_t background = 400; background < 1400; background += 10) {
    const std::size_t blob = 40 + rng() % 40;
    std::vector<double> coords;
    for (std::size_t i = 0; i < background; ++i) {
      coords.push_back(static_cast<double>(rng() >> 11) * 0x1.0p-53);
      coords.push_back(static_cast<double>(rng() >> 11) * 0x1.0p-53);
    }
    for (std::size_t i = 0; i < blob; ++i) {
      coords.push_back(0.5 + 1e-4 * static_cast<double>(i % 3));
      coords.push_back(0.5);
    }
    const dataset points(coords, 2);
    join_options o;
    o.eps = 0.002;  // about 0.01 background neighbours a point; the blob's all within
    o.engine = "cpu-grid";
    const estimated_join j{points.view(), points.view(), true, o};
    for (const result_footprint& f : {result_footprint{points.n(), 0, true, 12, 0},
                                      result_footprint{points.n(), 0, false, 4, 0}}) {
      const std::uint64_t needed = needed_bytes(j, f);
      ASSERT_GT(needed, f.bytes(0.9 * static_cast<double>(blob * (blob - 1))));
      EXPECT_FALSE(refused(j, f, needed, 1u << 20)) << background << " + " << blob;
    }
    // Whether the blob was sampled at all: at 48 of ~1000 points, about 2 to 4 of its points are.
    if (refused(j, result_footprint{points.n(), 0, false, 4, 0}, 4 * blob, 1u << 20)) ++blob_met;
  }
  EXPECT_GT(blob_met, 0) << "no sample met the blob: the test shows nothing";
}

// The estimate only runs where it can pay for itself: enough queries, and a result that could
// exceed the budget at all.
TEST(result_estimate, small_joins_are_not_estimated) {
  const dataset a = test::make_shape(shape_kind::uniform, 150, 2, test::test_seed());
  join_options o;
  o.eps = 2;  // every pair
  o.engine = "cpu-grid";
  const estimated_join j{a.view(), a.view(), true, o};
  const result_footprint table{a.n(), 0, true, 12, 0};
  EXPECT_FALSE(refused(j, table, 100, 1u << 20));  // 150 queries: fewer than 48 x 4
  const dataset big = test::make_shape(shape_kind::uniform, 1000, 2, test::test_seed());
  const estimated_join all{big.view(), big.view(), true, o};
  EXPECT_TRUE(refused(all, table, 100, 1u << 20));
  // Every pair there could be fits: nothing to estimate, nothing refused.
  EXPECT_FALSE(refused(all, table, table.bytes(1000.0 * 999), 1u << 20));
}

}  // namespace
}  // namespace epsjoin::detail
