// The public entry points: validation, engine lookup, self pairs, stats.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "epsjoin/join.hpp"

namespace {

epsjoin::dataset line_points() { return epsjoin::dataset(std::vector<double>{0, 1, 2, 10}, 1); }

epsjoin::join_options with_eps(double eps, std::string engine = "brute-cpu") {
  epsjoin::join_options opt;
  opt.eps = eps;
  opt.engine = std::move(engine);
  return opt;
}

TEST(dispatch, rejects_bad_eps) {
  epsjoin::resources res(1);
  const auto pts = line_points();
  epsjoin::count_sink sink;
  for (double eps : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(epsjoin::self_join(res, pts.view(), with_eps(eps), sink),
                 epsjoin::invalid_argument)
        << eps;
  }
}

// eps whose square overflows would make points whose squared distance overflows "within" it
// (inf <= inf): (1e300, 0) and (-1e300, 0) at eps 1e300 were reported as a pair.
TEST(dispatch, refuses_eps_whose_square_overflows_and_keeps_far_points_apart) {
  epsjoin::resources res(1);
  const epsjoin::dataset far(std::vector<double>{1e300, 0.0, -1e300, 0.0}, 2);
  epsjoin::count_sink sink;
  for (const char* engine : {"brute-cpu", "cpu-grid", "super-ego", "cpu-rtree"}) {
    EXPECT_THROW(epsjoin::self_join(res, far.view(), with_eps(1e300, engine), sink),
                 epsjoin::invalid_argument) << engine;
    auto f32 = with_eps(1e20, engine);
    f32.precision = epsjoin::scalar_type::f32;
    EXPECT_THROW(epsjoin::self_join(res, line_points().view(), f32, sink), epsjoin::invalid_argument)
        << engine;
    // The largest eps allowed: the points' squared distance overflows, eps's does not.
    const auto stats = epsjoin::self_join(res, far.view(),
                                          with_eps(std::sqrt(std::numeric_limits<double>::max()), engine), sink);
    EXPECT_EQ(stats.pairs, 0u) << engine;
  }
}

TEST(dispatch, rejects_unknown_engine_and_parameter_naming_them) {
  epsjoin::resources res(1);
  const auto pts = line_points();
  epsjoin::count_sink sink;
  try {
    epsjoin::self_join(res, pts.view(), with_eps(1, "warp-drive"), sink);
    FAIL();
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("warp-drive"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("brute-cpu"), std::string::npos);
  }
  auto opt = with_eps(1);
  opt.params["tile"] = "8";
  EXPECT_THROW(epsjoin::self_join(res, pts.view(), opt, sink), epsjoin::invalid_argument);
}

TEST(dispatch, rejects_non_finite_coordinates_and_mismatched_dimensions) {
  epsjoin::resources res(1);
  epsjoin::dataset bad(std::vector<double>{0, 1, std::nan(""), 3}, 2);
  epsjoin::count_sink sink;
  try {
    epsjoin::self_join(res, bad.view(), with_eps(1), sink);
    FAIL();
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("point 1, dimension 0"), std::string::npos) << e.what();
  }
  const auto a = line_points();
  epsjoin::dataset b(std::vector<double>{0, 0}, 2);
  EXPECT_THROW(epsjoin::join(res, a.view(), b.view(), with_eps(1), sink),
               epsjoin::invalid_argument);
}

TEST(dispatch, eps_is_an_inclusive_radius_and_self_pairs_are_optional) {
  epsjoin::resources res(2);
  const auto pts = line_points();
  epsjoin::join_stats stats;
  auto table = epsjoin::self_join(res, pts.view(), with_eps(1.0), &stats);
  EXPECT_EQ(stats.pairs, 4u);  // 0-1 and 1-2 at exactly eps, both directions
  EXPECT_EQ(stats.self_pairs, 0u);
  EXPECT_EQ(table.n_pairs(), 4u);
  EXPECT_DOUBLE_EQ(stats.selectivity(), 1.0);
  EXPECT_EQ(stats.engine, "brute-cpu");

  auto opt = with_eps(1.0);
  opt.include_self = true;
  auto with_self = epsjoin::self_join(res, pts.view(), opt, &stats);
  EXPECT_EQ(with_self.n_pairs(), 8u);
  EXPECT_EQ(stats.self_pairs, 4u);
  EXPECT_EQ(stats.pairs, 4u);
}

TEST(dispatch, auto_picks_a_real_engine_and_says_why) {
  epsjoin::resources res(1);
  const auto pts = line_points();
  epsjoin::count_sink sink;
  const auto stats = epsjoin::self_join(res, pts.view(), with_eps(1.5, "auto"), sink);
  EXPECT_NE(stats.engine, "auto");
  EXPECT_FALSE(stats.engine_reason.empty());
  EXPECT_EQ(sink.total(), 4u);
}

TEST(dispatch, empty_inputs_give_empty_results) {
  epsjoin::resources res(1);
  epsjoin::dataset none;
  epsjoin::csr_sink sink;
  const auto stats = epsjoin::self_join(res, none.view(), with_eps(1.0), sink);
  EXPECT_EQ(stats.pairs, 0u);
  EXPECT_EQ(sink.table().n_queries(), 0u);
}

TEST(dispatch, float32_input_is_accepted) {
  epsjoin::resources res(1);
  const auto pts = epsjoin::dataset::to_f32(line_points().view());
  epsjoin::count_sink sink;
  epsjoin::self_join(res, pts.view(), with_eps(1.0), sink);
  EXPECT_EQ(sink.total(), 4u);
}

TEST(engines, list_names_the_oracle_with_a_description) {
  const auto list = epsjoin::engines();
  auto it = std::find_if(list.begin(), list.end(), [](auto& e) { return e.name == "brute-cpu"; });
  ASSERT_NE(it, list.end());
  EXPECT_TRUE(it->available);
  EXPECT_FALSE(it->description.empty());
}

}  // namespace
