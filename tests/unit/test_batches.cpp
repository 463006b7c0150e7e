// Batch planning: coverage without loss or duplication, overflow splitting, the b_s model.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "model/batch_size.hpp"
#include "model/batches.hpp"
#include "support/seed.hpp"
#include "support/temp_dir.hpp"

namespace {

using epsjoin::detail::strided_batch;

std::vector<int> coverage(const std::vector<strided_batch>& batches, std::uint64_t n) {
  std::vector<int> hits(n, 0);
  for (const auto& b : batches) {
    for (std::uint64_t i = 0; i < b.count; ++i) {
      const std::uint64_t q = b.first + i * b.stride;
      EXPECT_LT(q, n);
      if (q < n) ++hits[q];
    }
  }
  return hits;
}

TEST(plan_batches, covers_every_query_once) {
  for (std::uint64_t n : {1u, 2u, 7u, 100u, 1001u}) {
    for (std::uint64_t est : {0u, 10u, 999u, 5000u, 100000u}) {
      const auto batches = epsjoin::detail::plan_batches(n, est, 100, 2);
      EXPECT_EQ(coverage(batches, n), std::vector<int>(n, 1)) << n << " " << est;
      EXPECT_LE(batches.size(), n);
      // As many batches as the estimate asks for (at least 2), each a contiguous run of queries.
      const std::uint64_t wanted =
          std::min<std::uint64_t>(n, std::max<std::uint64_t>(2, (est + 99) / 100));
      for (const auto& b : batches) {
        EXPECT_EQ(b.stride, 1u);
        EXPECT_LE(b.count, (n + wanted - 1) / wanted);
      }
    }
  }
  EXPECT_TRUE(epsjoin::detail::plan_batches(0, 10, 1).empty());
}

TEST(split_batch, pieces_cover_the_batch_once_and_fit_on_average) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint64_t n = 1 + rng() % 5000;
    const auto batches = epsjoin::detail::plan_batches(n, rng() % 100000, 1 + rng() % 5000);
    const strided_batch b = batches[rng() % batches.size()];
    const std::uint64_t capacity = 1 + rng() % 1000;
    const std::uint64_t produced = capacity + 1 + rng() % 100000;
    const auto pieces = epsjoin::detail::split_batch(b, produced, capacity);
    ASSERT_GE(pieces.size(), std::min<std::uint64_t>(2, b.count));
    // Each piece holds at most its share of the queries, so it is expected to fit.
    const std::uint64_t ways = std::clamp<std::uint64_t>(produced / capacity + 1, 2, b.count);
    for (const auto& p : pieces) {
      EXPECT_LE(p.count, (b.count + ways - 1) / ways);
      EXPECT_EQ(p.stride, b.stride);  // pieces keep the batch's locality
    }
    std::vector<int> want(n, 0);
    for (std::uint64_t i = 0; i < b.count; ++i) want[b.first + i * b.stride] = 1;
    EXPECT_EQ(coverage(pieces, n), want);
  }
  const strided_batch single{5, 3, 1};
  EXPECT_EQ(epsjoin::detail::split_batch(single, 100, 10), std::vector<strided_batch>{single});
}

TEST(estimate_from_sample, scales_and_adds_the_margin) {
  EXPECT_EQ(epsjoin::detail::estimate_from_sample(100, 10, 1000, 1.05), 10500u);
  EXPECT_EQ(epsjoin::detail::estimate_from_sample(0, 10, 1000), 0u);
  EXPECT_EQ(epsjoin::detail::estimate_from_sample(5, 0, 1000), 0u);
}

TEST(batch_model, trades_pinned_allocation_against_batch_overhead) {
  using namespace epsjoin::detail;
  // Paper 001's validation numbers: 0.4 s per 150e6-pair buffer... per stream, theta = 0.015 s.
  const batch_model model{0.4 / 150e6, 0.015};
  batch_size_limits limits;
  limits.max_pairs = 400'000'000;
  const std::uint64_t small = choose_batch_pairs(model, 50'000'000, limits);
  const std::uint64_t large = choose_batch_pairs(model, 5'000'000'000, limits);
  EXPECT_LT(small, large);  // more results justify larger buffers
  for (std::uint64_t other : {limits.min_pairs, limits.max_pairs, small / 2, small * 2}) {
    EXPECT_LE(batch_overhead(model, 50'000'000, small, limits),
              batch_overhead(model, 50'000'000, other, limits) + 1e-12);
  }
  // Buffers already allocated cost nothing: then the largest useful size wins.
  limits.already_allocated = limits.max_pairs;
  EXPECT_EQ(choose_batch_pairs(model, 5'000'000'000, limits), limits.max_pairs);
}

TEST(batch_model, cache_round_trips_per_device) {
  using namespace epsjoin::detail;
  const std::string dir = epsjoin::test::temp_path("cache");
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  batch_model m;
  EXPECT_FALSE(load_batch_model("no such device", m));
  store_batch_model("gpu A", {1e-9, 0.002});
  store_batch_model("gpu B", {2e-9, 0.003});
  store_batch_model("gpu A", {3e-9, 0.004});
  ASSERT_TRUE(load_batch_model("gpu A", m));
  EXPECT_DOUBLE_EQ(m.pinned_seconds_per_pair, 3e-9);
  EXPECT_DOUBLE_EQ(m.batch_overhead_seconds, 0.004);
  ASSERT_TRUE(load_batch_model("gpu B", m));
  EXPECT_DOUBLE_EQ(m.batch_overhead_seconds, 0.003);
  unsetenv("XDG_CACHE_HOME");
}

}  // namespace
