// Every CPU engine against the oracle in each metric it takes (metric harness), and the errors
// of metrics an engine does not take.
#include <gtest/gtest.h>

#include "support/metric_harness.hpp"

namespace {

using epsjoin::distance_metric;
using epsjoin::scalar_type;

// L1 and L-infinity in the grid's own kernels: columns (d <= 8) and rows, with early exits.
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_manhattan, distance_metric::manhattan, {"cpu-grid"});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_chebyshev, distance_metric::chebyshev, {"cpu-grid"});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_manhattan_rows_exit8, distance_metric::manhattan,
                            {"cpu-grid", {{"layout", "rows"}, {"early_exit", "8"}}});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_chebyshev_rows_full, distance_metric::chebyshev,
                            {"cpu-grid", {{"layout", "rows"}, {"pattern", "full"}}});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_chebyshev_f32, distance_metric::chebyshev,
                            {"cpu-grid", {}, scalar_type::f32});
EPSJOIN_ENGINE_METRIC_TESTS(auto_manhattan, distance_metric::manhattan, {"auto"});
// Engines that compute euclidean only: a Euclidean join in the ball that holds the metric's,
// every pair re-checked (core/metric_join.hpp).
EPSJOIN_ENGINE_METRIC_TESTS(super_ego_manhattan, distance_metric::manhattan, {"super-ego"});
EPSJOIN_ENGINE_METRIC_TESTS(super_ego_chebyshev, distance_metric::chebyshev, {"super-ego"});
EPSJOIN_ENGINE_METRIC_TESTS(super_ego_manhattan_f32, distance_metric::manhattan,
                            {"super-ego", {}, scalar_type::f32});
EPSJOIN_ENGINE_METRIC_TESTS(super_ego_chebyshev_f32, distance_metric::chebyshev,
                            {"super-ego", {}, scalar_type::f32});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_rtree_chebyshev, distance_metric::chebyshev, {"cpu-rtree"});

// Periodic boxes through images of the points near the faces, minimum image re-checked.
EPSJOIN_ENGINE_PERIODIC_TESTS(cpu_grid_periodic, distance_metric::euclidean, {"cpu-grid"});
EPSJOIN_ENGINE_PERIODIC_TESTS(cpu_grid_periodic_manhattan, distance_metric::manhattan, {"cpu-grid"});
EPSJOIN_ENGINE_PERIODIC_TESTS(cpu_grid_periodic_chebyshev, distance_metric::chebyshev, {"cpu-grid"});
EPSJOIN_ENGINE_PERIODIC_TESTS(cpu_grid_periodic_f32, distance_metric::euclidean,
                              {"cpu-grid", {}, scalar_type::f32});
EPSJOIN_ENGINE_PERIODIC_TESTS(super_ego_periodic, distance_metric::euclidean, {"super-ego"});
EPSJOIN_ENGINE_PERIODIC_TESTS(cpu_rtree_periodic, distance_metric::euclidean, {"cpu-rtree"});
EPSJOIN_ENGINE_PERIODIC_TESTS(auto_periodic, distance_metric::euclidean, {"auto"});

// Cosine and haversine through unit vectors, every delivered pair re-checked.
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_cosine, distance_metric::cosine, {"cpu-grid"});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_cosine_f32, distance_metric::cosine,
                            {"cpu-grid", {}, scalar_type::f32});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_haversine, distance_metric::haversine, {"cpu-grid"});
EPSJOIN_ENGINE_METRIC_TESTS(super_ego_cosine, distance_metric::cosine, {"super-ego"});
EPSJOIN_ENGINE_METRIC_TESTS(super_ego_haversine, distance_metric::haversine, {"super-ego"});
EPSJOIN_ENGINE_METRIC_TESTS(cpu_rtree_haversine, distance_metric::haversine, {"cpu-rtree"});
EPSJOIN_ENGINE_METRIC_TESTS(auto_cosine, distance_metric::cosine, {"auto"});

epsjoin::dataset grid_points() {
  std::vector<double> v;
  for (int i = 0; i < 40; ++i) {
    v.push_back(0.25 * (i % 7));
    v.push_back(0.25 * (i / 7));
  }
  return epsjoin::dataset(std::move(v), 2);
}

std::string error_of(epsjoin::join_options opt, const epsjoin::dataset& points) {
  epsjoin::resources res(1);
  epsjoin::count_sink sink;
  try {
    epsjoin::self_join(res, points.view(), opt, sink);
  } catch (const epsjoin::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(metric_errors, an_engine_without_the_metric_names_those_with_it) {
  epsjoin::join_options opt;
  opt.eps = 0.3;
  opt.metric = distance_metric::manhattan;
  opt.box = {2.0, 2.0};
  opt.engine = "cpu-rtree";
  const std::string msg = error_of(opt, grid_points());
  EXPECT_NE(msg.find("engine 'cpu-rtree' does not run the manhattan metric in a periodic box"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("engines that do: brute-cpu, cpu-grid"), std::string::npos) << msg;
}

TEST(metric_errors, auto_keeps_l1_and_linf_to_the_engines_that_compute_them) {
  const epsjoin::dataset points = grid_points();
  for (const distance_metric m : {distance_metric::manhattan, distance_metric::chebyshev}) {
    epsjoin::join_options opt;
    opt.eps = 0.3;
    opt.metric = m;
    epsjoin::resources res(1);
    epsjoin::count_sink sink;
    const epsjoin::join_stats stats = epsjoin::self_join(res, points.view(), opt, sink);
    EXPECT_EQ(stats.engine, "cpu-grid") << to_string(m) << ": " << stats.engine_reason;
  }
}

TEST(metric_errors, bad_geometry_is_refused_clearly) {
  const epsjoin::dataset points = grid_points();
  epsjoin::join_options opt;
  opt.eps = 0.3;
  opt.box = {1.0};
  EXPECT_NE(error_of(opt, points).find("the periodic box has 1 sides but the points have 2"), std::string::npos);
  opt.box = {2.0, 0.5};
  EXPECT_NE(error_of(opt, points).find("exceeds half the periodic box side 1"), std::string::npos);
  opt.box = {1.0, 1.0};
  opt.eps = 0.1;
  EXPECT_NE(error_of(opt, points).find("coordinates must lie in [0, 1)"), std::string::npos)
      << error_of(opt, points);
  opt.box.clear();
  opt.sphere_radius = 6371;
  EXPECT_NE(error_of(opt, points).find("haversine metric only"), std::string::npos);
  opt.metric = distance_metric::haversine;
  opt.angles = epsjoin::angle_unit::degrees;
  EXPECT_EQ(error_of(opt, points), "");
  opt.metric = distance_metric::cosine;
  opt.sphere_radius = 1;
  opt.angles = epsjoin::angle_unit::radians;
  EXPECT_NE(error_of(opt, points).find("point 0 is the zero vector"), std::string::npos);
  const epsjoin::dataset three(std::vector<double>{1, 2, 3}, 3);
  opt.metric = distance_metric::haversine;
  EXPECT_NE(error_of(opt, three).find("haversine metric takes points of 2 columns"), std::string::npos);
  const epsjoin::dataset far_north(std::vector<double>{1.6, 0.0}, 2);
  EXPECT_NE(error_of(opt, far_north).find("has latitude 1.6"), std::string::npos);
}

TEST(metric_errors, engines_list_their_metrics) {
  for (const epsjoin::engine_info& e : epsjoin::engines()) {
    ASSERT_FALSE(e.metrics.empty()) << e.name;
    EXPECT_EQ(e.metrics.front(), distance_metric::euclidean) << e.name;
    if (e.name == "brute-cpu") {
      EXPECT_EQ(e.metrics.size(), 5u);
      EXPECT_TRUE(e.periodic);
    }
  }
}

}  // namespace

namespace {

// Float32 input (not only float32 arithmetic): the images and unit vectors are float64, and a
// join A x B of float32 sets must still run and agree with the oracle.
TEST(metric_inputs, float32_points_in_a_box_and_on_the_sphere) {
  std::vector<float> a, b;
  for (int i = 0; i < 300; ++i) {
    a.push_back(static_cast<float>((i * 37 % 101 + 1) / 103.0));
    a.push_back(static_cast<float>((i * 53 % 97) / 97.0));
    b.push_back(static_cast<float>((i * 41 % 89 + 1) / 91.0));
    b.push_back(static_cast<float>((i * 29 % 83) / 83.0));
  }
  const epsjoin::dataset qa(std::move(a), 2), db(std::move(b), 2);
  for (distance_metric m : {distance_metric::euclidean, distance_metric::cosine,
                            distance_metric::haversine}) {
    epsjoin::join_options opt;
    opt.eps = 0.08;
    opt.metric = m;
    if (m == distance_metric::euclidean) opt.box = {1.0, 1.0};
    epsjoin::resources res(2);
    epsjoin::count_sink oracle(true), grid(true);
    opt.engine = "brute-cpu";
    epsjoin::join(res, qa.view(), db.view(), opt, oracle);
    opt.engine = "cpu-grid";
    epsjoin::join(res, qa.view(), db.view(), opt, grid);
    EXPECT_GT(oracle.total(), 0u);
    EXPECT_EQ(grid.per_point(), oracle.per_point()) << epsjoin::to_string(m);
  }
}

}  // namespace
