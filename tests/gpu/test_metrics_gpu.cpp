// The GPU engines in cosine and haversine (a join of unit vectors at a widened radius, every
// pair re-checked in float64 by dispatch) and in periodic boxes (images near the faces, minimum
// image re-checked), against the oracle on the metric harness's shapes: ties, poles, the
// antimeridian, eps = side / 2; and in L1 and L-infinity (a Euclidean join in the ball that holds
// the metric's, every pair re-checked).
#include <gtest/gtest.h>

#include "support/metric_harness.hpp"

namespace {

using epsjoin::distance_metric;
using epsjoin::scalar_type;

#define EPSJOIN_GPU_METRIC_SUITES(tag, engine)                                                  \
  EPSJOIN_ENGINE_METRIC_TESTS(tag##_cosine, distance_metric::cosine, {engine});               \
  EPSJOIN_ENGINE_METRIC_TESTS(tag##_cosine_f32, distance_metric::cosine,                      \
                              {engine, {}, scalar_type::f32});                                \
  EPSJOIN_ENGINE_METRIC_TESTS(tag##_haversine, distance_metric::haversine, {engine});         \
  EPSJOIN_ENGINE_METRIC_TESTS(tag##_manhattan, distance_metric::manhattan, {engine});         \
  EPSJOIN_ENGINE_METRIC_TESTS(tag##_chebyshev_f32, distance_metric::chebyshev,                \
                              {engine, {}, scalar_type::f32});                                \
  EPSJOIN_ENGINE_PERIODIC_TESTS(tag##_periodic, distance_metric::euclidean, {engine})

EPSJOIN_GPU_METRIC_SUITES(gpu_sj, "gpu-sj");
EPSJOIN_GPU_METRIC_SUITES(brute_gpu, "brute-gpu");
EPSJOIN_GPU_METRIC_SUITES(lbjoin, "lbjoin");
EPSJOIN_GPU_METRIC_SUITES(gds_join, "gds-join");
EPSJOIN_GPU_METRIC_SUITES(ted_join, "ted-join");
EPSJOIN_GPU_METRIC_SUITES(meta_16q, "meta-16q");
EPSJOIN_GPU_METRIC_SUITES(meta_1q, "meta-1q");
EPSJOIN_GPU_METRIC_SUITES(hegjoin, "hegjoin");

TEST(gpu_metrics, l1_in_a_periodic_box_is_refused_naming_the_engines_that_compute_it) {
  const epsjoin::dataset points(std::vector<double>{0, 0, 1, 1}, 2);
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = 1;
  opt.engine = "lbjoin";
  opt.metric = distance_metric::manhattan;
  opt.box = {2.0, 2.0};
  epsjoin::count_sink sink;
  try {
    epsjoin::self_join(res, points.view(), opt, sink);
    FAIL() << "lbjoin ran the manhattan metric in a periodic box";
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("engines that do: brute-cpu, cpu-grid"), std::string::npos)
        << e.what();
  }
}

}  // namespace
