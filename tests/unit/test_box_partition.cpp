// The library's box partition (multi-GPU joins and mpi-join): every neighbour of a box's point
// lies in the box or its halo (against the brute-force engine, ties at eps and duplicates
// included), every point has exactly one box, and skewed data is balanced by work rather than
// by point count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "epsjoin/partition.hpp"
#include "epsjoin/generate.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin {
namespace {

neighbor_table brute_neighbours(resources& res, const dataset& points, double eps) {
  join_options options;
  options.eps = eps;
  options.engine = "brute-cpu";
  return self_join(res, points.view(), options);
}

void expect_halo_covers_neighbours(const dataset& points, double eps, std::size_t boxes) {
  resources res(2);
  const partition_plan plan = plan_partition(res, points.view(), eps, boxes, 500, 1);
  ASSERT_EQ(plan.partition.boxes(), boxes);
  ASSERT_TRUE(std::is_sorted(plan.partition.splits.begin(), plan.partition.splits.end()));
  const box_members members = assign_points(plan.partition, points.view(), 3);
  std::vector<int> owners(points.n(), 0);
  std::vector<std::size_t> box_of(points.n(), 0);
  for (std::size_t b = 0; b < boxes; ++b) {
    for (std::uint32_t i : members.own[b]) {
      ++owners[i];
      box_of[i] = b;
    }
  }
  for (std::size_t i = 0; i < points.n(); ++i) ASSERT_EQ(owners[i], 1) << "point " << i;
  std::vector<std::set<std::uint32_t>> reachable(boxes);
  for (std::size_t b = 0; b < boxes; ++b) {
    reachable[b].insert(members.own[b].begin(), members.own[b].end());
    for (std::uint32_t j : members.halo[b]) {
      EXPECT_NE(box_of[j], b) << "point " << j << " is both own and halo of box " << b;
      reachable[b].insert(j);
    }
  }
  const neighbor_table table = brute_neighbours(res, points, eps);
  for (std::size_t i = 0; i < points.n(); ++i) {
    for (std::uint32_t j : table.row(i)) {
      ASSERT_TRUE(reachable[box_of[i]].count(j)) << "neighbour " << j << " of point " << i
                                                  << " is missing from box " << box_of[i];
    }
  }
}

dataset generated(const std::string& spec) { return generate(parse_generator_spec(spec)); }

TEST(BoxPartition, HaloHoldsEveryNeighbourOnRandomData) {
  for (std::size_t boxes : {2, 3, 5, 8}) {
    SCOPED_TRACE(boxes);
    expect_halo_covers_neighbours(generated("uniform:2:1500:seed=1"), 0.05, boxes);
    expect_halo_covers_neighbours(generated("expo:3:1500:seed=2"), 0.02, boxes);
    expect_halo_covers_neighbours(generated("uniform:5:800:seed=3"), 0.3, boxes);
    // Boxes thinner than eps: the halo reaches over several boxes.
    expect_halo_covers_neighbours(generated("uniform:2:600:seed=4"), 0.45, boxes);
  }
}

TEST(BoxPartition, HaloHoldsNeighboursAtExactlyEpsAndDuplicates) {
  std::vector<double> values;
  for (int copy = 0; copy < 2; ++copy) {
    for (int x = 0; x < 20; ++x) {
      for (int y = 0; y < 6; ++y) {
        values.push_back(x);
        values.push_back(y);
      }
    }
  }
  const dataset lattice(std::move(values), 2);
  for (std::size_t boxes : {2, 3, 4, 7}) expect_halo_covers_neighbours(lattice, 1.0, boxes);
}

TEST(BoxPartition, IdenticalPointsShareOneBoxAndFewPointsLeaveBoxesEmpty) {
  const dataset same(std::vector<double>(2 * 30, 0.5), 2);
  resources res(1);
  const partition_plan plan = plan_partition(res, same.view(), 0.1, 4, 100, 1);
  const box_members members = assign_points(plan.partition, same.view());
  std::size_t busy = 0;
  for (const auto& own : members.own) busy += own.empty() ? 0 : 1;
  EXPECT_EQ(busy, 1u);
  expect_halo_covers_neighbours(dataset(std::vector<double>{0, 0, 0.3, 0}, 2), 0.5, 4);
  expect_halo_covers_neighbours(dataset(std::vector<double>{1, 2}, 2), 0.5, 3);
}

TEST(BoxPartition, SkewedDataIsBalancedByPairsNotPoints) {
  // Exponential data: most pairs lie near the origin, so equal point counts would give the first
  // box most of the work. Cut by the sample's neighbour counts, the boxes' pairs are even.
  const dataset points = generated("expo:2:20000:seed=11");
  const double eps = 0.01;
  resources res(2);
  const std::size_t boxes = 4;
  const partition_plan plan = plan_partition(res, points.view(), eps, boxes, 20000, 1);
  const box_members members = assign_points(plan.partition, points.view());
  join_options options;
  options.eps = eps;
  count_sink counter(true);
  self_join(res, points.view(), options, counter);
  std::vector<double> pairs(boxes, 0);
  for (std::size_t b = 0; b < boxes; ++b) {
    for (std::uint32_t i : members.own[b]) pairs[b] += 1 + static_cast<double>(counter.per_point()[i]);
  }
  const double mean = (pairs[0] + pairs[1] + pairs[2] + pairs[3]) / boxes;
  const double most = *std::max_element(pairs.begin(), pairs.end());
  EXPECT_LT((most - mean) / mean, 0.10) << pairs[0] << " " << pairs[1] << " " << pairs[2] << " "
                                         << pairs[3];
  // And the point counts are far from even: the balance came from the work estimate.
  std::size_t fewest = points.n(), most_points = 0;
  for (const auto& own : members.own) {
    fewest = std::min(fewest, own.size());
    most_points = std::max(most_points, own.size());
  }
  EXPECT_GT(most_points, 2 * fewest);
}

// A file of repeated copies (tiles, replicas) sampled at a fixed stride that divides the copy's
// length would see the same few points of every copy; the sample must see most of them.
TEST(take_sample, sees_the_points_of_a_file_of_copies) {
  const std::size_t distinct = 50, copies = 400;
  dataset points(distinct * copies, 1, scalar_type::f64);
  for (std::size_t i = 0; i < points.n(); ++i) points.f64()[i] = static_cast<double>(i % distinct);
  const dataset sample = take_sample(points.view(), 4000);  // the stride would be 5
  ASSERT_EQ(sample.n(), 4000u);
  std::set<double> seen(sample.f64(), sample.f64() + sample.n());
  EXPECT_GE(seen.size(), distinct * 9 / 10);
  // The same input gives the same sample, and small inputs are taken whole.
  const dataset again = take_sample(points.view(), 4000);
  EXPECT_TRUE(std::equal(sample.f64(), sample.f64() + sample.n(), again.f64()));
  const dataset whole = take_sample(points.view(), points.n() + 5);
  ASSERT_EQ(whole.n(), points.n());
  EXPECT_TRUE(std::equal(whole.f64(), whole.f64() + whole.n(), points.f64()));
}

// A sample too thin for eps (0.1 sample neighbours a point) counts at a wider radius: the cuts of
// uniform points then split them evenly instead of following the few sample points that happen
// to have a neighbour.
TEST(plan_partition, a_thin_sample_still_balances_uniform_points) {
  const dataset points = generated("uniform:2:400000:seed=5");
  const double eps = std::sqrt(20.0 / (3.14159 * 400000));  // S about 20, 0.1 in the sample
  resources res(2);
  const std::size_t boxes = 4;
  const partition_plan plan = plan_partition(res, points.view(), eps, boxes, 2000, 1);
  const box_members members = assign_points(plan.partition, points.view());
  for (const auto& own : members.own) {
    EXPECT_NEAR(static_cast<double>(own.size()), 100000.0, 9000.0);  // 19% off without
  }
}

}  // namespace
}  // namespace epsjoin
