// hegjoin's static partitioning model (src/hetero/partition.hpp, dissertation eq. 4.1-4.5).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "epsjoin/error.hpp"
#include "hetero/partition.hpp"

namespace {

using namespace epsjoin::detail::hetero;

TEST(partition, search_volume_ratio_is_the_radius_ratio_to_the_d) {
  EXPECT_NEAR(search_volume_ratio(2, 2.0, 1.0), 4.0, 1e-12);
  EXPECT_NEAR(search_volume_ratio(3, 0.5, 1.0), 0.125, 1e-12);
  EXPECT_NEAR(search_volume_ratio(8, 0.0178, 0.0127), std::pow(0.0178 / 0.0127, 8), 1e-9);
  // High d: finite where the powers themselves would not be.
  EXPECT_TRUE(std::isfinite(search_volume_ratio(400, 2.0, 1.5)));
  EXPECT_THROW(search_volume_ratio(2, 0.0, 1.0), epsjoin::invalid_argument);
}

TEST(partition, model_follows_equations_4_1_to_4_4) {
  // GPU 1 s, CPU 3 s at eps 0.01; at eps 0.02 in 2-D both take 4x as long.
  const partition_model m = predict_partition(2, 0.02, {0.01, 1.0, 3.0});
  EXPECT_NEAR(m.gpu_seconds, 4.0, 1e-12);
  EXPECT_NEAR(m.cpu_seconds, 12.0, 1e-12);
  EXPECT_NEAR(m.gpu_fraction, 0.75, 1e-12);   // (1/4) / (1/4 + 1/12)
  EXPECT_NEAR(m.hybrid_seconds, 3.0, 1e-12);  // 1 / (1/4 + 1/12)
  // Equal sides split evenly, whatever the radius.
  EXPECT_NEAR(predict_partition(5, 0.3, {0.1, 2.0, 2.0}).gpu_fraction, 0.5, 1e-12);
  // At 128-D the volume ratio overflows; the fraction does not depend on it.
  EXPECT_NEAR(predict_partition(128, 1.0, {0.01, 1.0, 3.0}).gpu_fraction, 0.75, 1e-12);
  EXPECT_THROW(predict_partition(2, 0.02, {0.01, 0.0, 3.0}), epsjoin::invalid_argument);
}

TEST(partition, static_queries_split_by_count) {
  EXPECT_EQ(gpu_queries_by_count(100, 0.5), 50u);  // dissertation fig. 4.4
  EXPECT_EQ(gpu_queries_by_count(100, 0.0), 0u);
  EXPECT_EQ(gpu_queries_by_count(100, 1.0), 100u);
  EXPECT_EQ(gpu_queries_by_count(3, 0.5), 2u);  // rounded to nearest
  EXPECT_THROW(gpu_queries_by_count(10, 1.5), epsjoin::invalid_argument);
}

TEST(partition, static_candidates_take_the_closest_cumulative_workload) {
  // Heaviest first, total 100: half is reached exactly after 40 + 10.
  const std::vector<std::uint64_t> w = {40, 10, 10, 10, 10, 10, 5, 5};
  EXPECT_EQ(gpu_items_by_candidates(w, 0.5), 2u);
  EXPECT_EQ(gpu_items_by_candidates(w, 0.0), 0u);
  EXPECT_EQ(gpu_items_by_candidates(w, 1.0), w.size());
  // Target 30: 40 is 10 past it, 0 is 30 short: one item.
  EXPECT_EQ(gpu_items_by_candidates(w, 0.3), 1u);
  // Target 15: 0 is 15 short, 40 is 25 past: none (the closer prefix).
  EXPECT_EQ(gpu_items_by_candidates(w, 0.15), 0u);
  // Target 50 of {30, 40, 30}: 30 is 20 short, 70 is 20 past: the shorter on a tie.
  EXPECT_EQ(gpu_items_by_candidates(std::vector<std::uint64_t>{30, 40, 30}, 0.5), 1u);
  EXPECT_EQ(gpu_items_by_candidates(std::vector<std::uint64_t>{}, 0.5), 0u);
}

TEST(partition, gpu_batches_per_strategy) {
  EXPECT_EQ(min_gpu_batches(3, true), 6u);
  EXPECT_EQ(min_gpu_batches(3, false), 3u);
}

}  // namespace
