// The k nearest within a radius and OPTICS on every GPU engine: each must give exactly what
// brute-cpu gives (tests/engines/test_nearest.cpp and test_optics.cpp check brute-cpu against
// independent oracles). Both take the engine's pairs through host sinks; the points are float64
// so the engines decide exactly, on clusters, uniform points and a lattice with pairs at
// exactly the radius.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "epsjoin/join.hpp"
#include "epsjoin/nearest.hpp"
#include "epsjoin/optics.hpp"
#include "support/gpu_engines.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace {

using namespace epsjoin;

using test::device_engines;

struct gpu_case {
  test::shape_kind kind;
  std::size_t d;
  double radius;
};

const std::vector<gpu_case>& cases() {
  static const std::vector<gpu_case> all = {{test::shape_kind::clusters, 2, 0.05},
                                            {test::shape_kind::uniform, 3, 0.12},
                                            {test::shape_kind::lattice, 2, 0.5}};
  return all;
}

TEST(nearest_gpu, every_engine_equals_brute_cpu) {
  const std::vector<std::string> names = device_engines();
  if (names.empty()) GTEST_SKIP() << "no GPU engine available";
  resources res(4);
  for (const gpu_case& c : cases()) {
    const dataset points = test::make_shape(c.kind, 3000, c.d, test::test_seed());
    join_options o;
    o.eps = c.radius;
    o.engine = "brute-cpu";
    const nearest_table want = self_nearest_within(res, points.view(), 7, o);
    for (const std::string& name : names) {
      SCOPED_TRACE(name + " on " + test::to_string(c.kind));
      o.engine = name;
      const nearest_table got = self_nearest_within(res, points.view(), 7, o);
      EXPECT_EQ(got.offsets, want.offsets);
      EXPECT_EQ(got.neighbors, want.neighbors);
      EXPECT_EQ(got.distances, want.distances);
    }
  }
}

TEST(optics_gpu, every_engine_equals_brute_cpu) {
  const std::vector<std::string> names = device_engines();
  if (names.empty()) GTEST_SKIP() << "no GPU engine available";
  resources res(4);
  for (const gpu_case& c : cases()) {
    const dataset points = test::make_shape(c.kind, 3000, c.d, test::test_seed() + 1);
    optics_options o;
    o.engine = "brute-cpu";
    const optics_result want = optics(res, points.view(), c.radius, 6, o);
    for (const std::string& name : names) {
      SCOPED_TRACE(name + " on " + test::to_string(c.kind));
      o.engine = name;
      const optics_result got = optics(res, points.view(), c.radius, 6, o);
      EXPECT_EQ(got.engine, name);
      EXPECT_EQ(got.ordering, want.ordering);
      EXPECT_EQ(got.reachability, want.reachability);
      EXPECT_EQ(got.core_distances, want.core_distances);
      EXPECT_EQ(got.predecessor, want.predecessor);
    }
  }
}

}  // namespace
