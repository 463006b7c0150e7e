// join_options::share, one process's share of the work items of a counts-only join that several
// processes run whole (mpi-join's items split): on cpu-grid, the CPU engine that counts shares,
// the shares' counts add up to the oracle's, per point and in total, for 2 to 5 shares, on shapes
// from 1-D to 16-D with ties at exactly eps and duplicates, self-joins and A x B, whatever each
// share's thread count; and what cannot be shared is refused before any work. The GPU engines
// run the same checks in tests/gpu/test_work_items_share_gpu.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "epsjoin/error.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/shapes.hpp"
#include "support/share_check.hpp"

namespace epsjoin::test {
namespace {

struct share_case {
  shape_kind kind;
  std::size_t n, d;
  double selectivity;  // 0: eps 0.25, the lattice's spacing (ties at exactly eps)
};

double eps_of(const share_case& c, const dataset& points) {
  return c.selectivity == 0 ? 0.25
                            : eps_for_selectivity(points.view(), points.view(), c.selectivity);
}

TEST(work_items_share, cpu_grid_shares_add_up_to_the_oracle) {
  const std::vector<share_case> cases = {
      {shape_kind::uniform, 3000, 1, 20},  {shape_kind::uniform, 4000, 2, 30},
      {shape_kind::lattice, 900, 2, 0},    {shape_kind::lattice, 512, 3, 0},
      {shape_kind::skewed, 3000, 4, 40},   {shape_kind::clusters, 2500, 3, 60},
      {shape_kind::duplicates, 1500, 2, 50}, {shape_kind::skewed, 2000, 16, 20},
  };
  for (const share_case& c : cases) {
    SCOPED_TRACE(testing::Message() << to_string(c.kind) << " n " << c.n << " d " << c.d);
    const dataset points = make_shape(c.kind, c.n, c.d, 11);
    expect_shares_add_up("cpu-grid", points, nullptr, eps_of(c, points), {2, 3, 5});
  }
}

TEST(work_items_share, a_x_b_and_self_pairs) {
  const dataset points = make_shape(shape_kind::skewed, 3000, 3, 5);
  const dataset queries = make_shape(shape_kind::skewed, 1200, 3, 6);
  const double eps = eps_for_selectivity(queries.view(), points.view(), 30);
  expect_shares_add_up("cpu-grid", points, &queries, eps, {2, 4});
  const dataset lattice = make_shape(shape_kind::lattice, 700, 2, 3);
  expect_shares_add_up("cpu-grid", lattice, nullptr, 0.25, {3}, /*include_self=*/true);
}

TEST(work_items_share, more_shares_than_items_leave_some_empty) {
  const dataset points = make_shape(shape_kind::lattice, 27, 3, 1);
  expect_shares_add_up("cpu-grid", points, nullptr, 0.25, {40});
}

// One share of a lattice join alone: its count is part of the whole, not the whole.
TEST(work_items_share, one_share_counts_only_its_part) {
  const dataset points = make_shape(shape_kind::lattice, 900, 2, 2);
  resources res(2);
  join_options options;
  options.eps = 0.25;
  options.engine = "cpu-grid";
  count_sink whole, part;
  self_join(res, points.view(), options, whole);
  options.share = {1, 3};
  const join_stats stats = self_join(res, points.view(), options, part);
  EXPECT_GT(part.total(), 0u);
  EXPECT_LT(part.total(), whole.total());
  EXPECT_NE(note_of(stats, "work share").find("tasks 1, 1 + 3"), std::string::npos)
      << note_of(stats, "work share");
}

template <class F>
std::string refusal(F&& run) {
  try {
    run();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "(no refusal)";
}

TEST(work_items_share, what_cannot_be_shared_is_refused) {
  const dataset points = make_shape(shape_kind::uniform, 500, 2, 4);
  resources res(1);
  join_options options;
  options.eps = 0.05;
  options.share = {0, 2};
  count_sink counts;
  options.engine = "super-ego";
  EXPECT_NE(refusal([&] { self_join(res, points.view(), options, counts); })
                .find("cannot count a share of the work items; engines that can: "),
            std::string::npos);
  options.engine = "cpu-grid";
  csr_sink table;
  EXPECT_NE(refusal([&] { self_join(res, points.view(), options, table); }).find("counts-only"),
            std::string::npos);
  options.metric = distance_metric::manhattan;
  EXPECT_NE(refusal([&] { self_join(res, points.view(), options, counts); }).find("euclidean"),
            std::string::npos);
  options.metric = distance_metric::euclidean;
  options.share = {2, 2};
  EXPECT_NE(refusal([&] { self_join(res, points.view(), options, counts); })
                .find("share 2 of 2 work-item shares does not exist"),
            std::string::npos);
  options.share = {0, 0};
  EXPECT_NE(refusal([&] { self_join(res, points.view(), options, counts); }).find("does not exist"),
            std::string::npos);
}

// `auto` keeps to the engines that count shares, and says why when its usual choice cannot.
TEST(work_items_share, auto_takes_an_engine_that_shares) {
  const dataset points = make_shape(shape_kind::skewed, 2000, 24, 9);
  const double eps = eps_for_selectivity(points.view(), points.view(), 20);
  resources res(2);
  join_options options;
  options.eps = eps;
  options.share = {0, 2};
  count_sink counts;
  const join_stats stats = self_join(res, points.view(), options, counts);
  bool shares = false;
  for (const engine_info& e : engines()) shares |= e.name == stats.engine && e.shares_work_items;
  EXPECT_TRUE(shares) << stats.engine << ": " << stats.engine_reason;
}

TEST(work_items_share, engines_say_whether_they_share) {
  bool cpu_grid = false, super_ego = true;
  for (const engine_info& e : engines()) {
    if (e.name == "cpu-grid") cpu_grid = e.shares_work_items;
    if (e.name == "super-ego") super_ego = e.shares_work_items;
  }
  EXPECT_TRUE(cpu_grid);
  EXPECT_FALSE(super_ego);
}

}  // namespace
}  // namespace epsjoin::test
