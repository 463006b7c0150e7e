#pragma once
// The property harness for metrics and periodic boxes: any engine against the brute-cpu oracle
// in one metric, on shapes made for it (ties at exactly eps where the metric allows them: integer
// lattices for L1 and L-infinity, 0/1 vectors for cosine, a lattice wrapping round a box), with
// exact distances (long double, and haversine by another formula) to judge any disagreement.
//
//   EPSJOIN_ENGINE_METRIC_TESTS(cpu_grid_manhattan, epsjoin::distance_metric::manhattan,
//                               {"cpu-grid"});

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/harness.hpp"

namespace epsjoin::test {

enum class metric_shape {
  uniform, clusters, skewed, duplicates, lattice,  // as shape_kind (cosine: no zero row)
  signed_normal,   // centred Gaussian: cosines over all of [-1, 1]
  binary,          // 0/1 vectors of weights 1, 2 and 4: cosine distances 0, 1/4, 1/2, ... exactly
  sphere,          // uniform on the sphere, (latitude, longitude)
  poles,           // latitudes within 0.05 degrees of +-90, some exactly at a pole
  antimeridian,    // longitudes within 0.05 degrees of +-180, both sides
  box_uniform,     // uniform in the periodic box [0, 1)^d
  box_lattice,     // multiples of 0.25 filling a box of side 0.25 * k: ties across the wrap
};

enum class metric_eps { none, sel10, sel100, tie, all };

struct metric_case {
  metric_shape shape;
  std::size_t n, d;
  metric_eps eps;
  bool self_join = true;
  std::size_t n_queries = 0;
  bool degrees = false;  // haversine only
  bool periodic = false;
  std::string name() const;
};

/// The cases run for `metric` (periodic ones only where `periodic`).
std::vector<metric_case> metric_cases(distance_metric metric, bool periodic);

/// The points of case c (n of them: c.n, or c.n_queries for the query side), its periodic box
/// (empty unless c.periodic) and its eps for options `o` (metric, angles and box set).
dataset make_metric_points(const metric_case& c, distance_metric metric, std::size_t n,
                           std::uint64_t seed);
std::vector<double> metric_box(const metric_case& c);
double metric_case_eps(const metric_case& c, const join_options& o, const dataset& queries,
                       const dataset& data);

/// The relative band around eps inside which the oracle's float64 formula may disagree with
/// exact_metric_distance: 1e-12, haversine's 1e-10, and cosine's absolute (4d + 16) 2^-53 (1 - cos
/// cancels) as a fraction of eps.
double metric_band(distance_metric metric, std::size_t d, double eps);

/// The exact distance of a and b in the options' metric, computed independently of the library
/// (long double; haversine as atan2(|a x b|, a . b) of 3-D vectors).
long double exact_metric_distance(const join_options& o, const double* a, const double* b,
                                  std::size_t d);

/// The engine against the oracle on one case: pairs, counts and CSR rows.
void check_metric_against_oracle(const engine_config& config, distance_metric metric,
                                 const metric_case& c);

class metric_property_test : public testing::TestWithParam<metric_case> {};
inline std::string metric_case_name(const testing::TestParamInfo<metric_case>& info) {
  return info.param.name();
}
inline void PrintTo(const metric_case& c, std::ostream* out) { *out << c.name(); }

}  // namespace epsjoin::test

#define EPSJOIN_ENGINE_METRIC_TESTS_EX(suite, metric, periodic, ...)                        \
  class suite : public ::epsjoin::test::metric_property_test {};                           \
  TEST_P(suite, matches_oracle) {                                                          \
    ::epsjoin::test::check_metric_against_oracle(::epsjoin::test::engine_config __VA_ARGS__, \
                                                 metric, GetParam());                      \
  }                                                                                        \
  INSTANTIATE_TEST_SUITE_P(shapes, suite,                                                  \
                           ::testing::ValuesIn(::epsjoin::test::metric_cases(metric, periodic)), \
                           ::epsjoin::test::metric_case_name)

#define EPSJOIN_ENGINE_METRIC_TESTS(suite, metric, ...) \
  EPSJOIN_ENGINE_METRIC_TESTS_EX(suite, metric, false, __VA_ARGS__)
#define EPSJOIN_ENGINE_PERIODIC_TESTS(suite, metric, ...) \
  EPSJOIN_ENGINE_METRIC_TESTS_EX(suite, metric, true, __VA_ARGS__)
