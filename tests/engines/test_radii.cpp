// count_within_radii against one oracle join per radius: every metric, a box, lattices with pairs
// at exactly each radius, radii unsorted and repeated, self-joins and A x B.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "epsjoin/radii.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"

namespace {

using epsjoin::distance_metric;

std::vector<std::uint64_t> oracle_counts(const epsjoin::dataset* queries, const epsjoin::dataset& data,
                                         epsjoin::join_options opt, double r) {
  epsjoin::resources res(2);
  opt.engine = "brute-cpu";
  opt.eps = r;
  epsjoin::count_sink sink(true);
  if (queries == nullptr) {
    epsjoin::self_join(res, data.view(), opt, sink);
  } else {
    epsjoin::join(res, queries->view(), data.view(), opt, sink);
  }
  return sink.per_point();
}

void check(const epsjoin::dataset* queries, const epsjoin::dataset& data, epsjoin::join_options opt,
           const std::vector<double>& radii) {
  epsjoin::resources res(3);
  const epsjoin::radii_counts got =
      queries == nullptr ? epsjoin::count_within_radii(res, data.view(), opt, radii)
                         : epsjoin::count_within_radii(res, queries->view(), data.view(), opt, radii);
  const std::size_t n = queries == nullptr ? data.n() : queries->n();
  ASSERT_EQ(got.per_query.size(), n * radii.size());
  for (std::size_t k = 0; k < radii.size(); ++k) {
    const auto want = oracle_counts(queries, data, opt, radii[k]);
    std::uint64_t total = 0;
    for (std::size_t q = 0; q < n; ++q) {
      ASSERT_EQ(got.per_query[q * radii.size() + k], want[q])
          << "query " << q << ", radius " << radii[k] << ", metric " << epsjoin::to_string(opt.metric);
      total += want[q];
    }
    EXPECT_EQ(got.totals[k], total);
  }
}

class radii_test : public testing::TestWithParam<std::string> {};

TEST_P(radii_test, lattice_ties_in_every_norm_and_box) {
  const epsjoin::dataset lattice = epsjoin::test::make_shape(epsjoin::test::shape_kind::lattice, 500, 3,
                                                             epsjoin::test::test_seed());
  std::vector<distance_metric> takes;
  for (const epsjoin::engine_info& e : epsjoin::engines()) {
    if (e.name == GetParam()) takes = e.metrics;
  }
  for (distance_metric m : {distance_metric::euclidean, distance_metric::manhattan,
                            distance_metric::chebyshev}) {
    if (std::find(takes.begin(), takes.end(), m) == takes.end()) continue;  // refused elsewhere
    epsjoin::join_options opt;
    opt.engine = GetParam();
    opt.metric = m;
    check(nullptr, lattice, opt, {0.5, 0.25, 0.75, 0.25, 0.3});
    opt.include_self = true;
    check(nullptr, lattice, opt, {0.25, 0.5});
  }
  // In a box of side 2 (coordinates 0 to 1.75): ties across the wrap; radii up to side / 2.
  epsjoin::join_options opt;
  opt.engine = GetParam();
  opt.box = {2.0, 2.0, 2.0};
  check(nullptr, lattice, opt, {1.0, 0.25, 0.5});
}

TEST_P(radii_test, cosine_haversine_and_a_join) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(400 * 5), b(300 * 5), lat_lon(600 * 2);
  for (double& x : a) x = u(rng);
  for (double& x : b) x = u(rng);
  for (std::size_t i = 0; i < 600; ++i) {
    lat_lon[2 * i] = 1.5 * u(rng);
    lat_lon[2 * i + 1] = 3.1 * u(rng);
  }
  const epsjoin::dataset qa(std::move(a), 5), db(std::move(b), 5), sphere(std::move(lat_lon), 2);
  epsjoin::join_options opt;
  opt.engine = GetParam();
  opt.metric = distance_metric::cosine;
  check(nullptr, qa, opt, {0.05, 0.2, 0.5});
  check(&qa, db, opt, {0.3, 0.1});
  opt.metric = distance_metric::haversine;
  opt.sphere_radius = 6371;
  check(nullptr, sphere, opt, {500, 1000, 200});
}

INSTANTIATE_TEST_SUITE_P(engines, radii_test, testing::Values("cpu-grid", "brute-cpu", "super-ego"));

TEST(radii_errors, bad_radii_are_refused) {
  const epsjoin::dataset points(std::vector<double>{0, 0, 1, 1}, 2);
  epsjoin::resources res(1);
  epsjoin::join_options opt;
  EXPECT_THROW(epsjoin::count_within_radii(res, points.view(), opt, {}), epsjoin::invalid_argument);
  const std::vector<double> bad = {0.5, -1};
  EXPECT_THROW(epsjoin::count_within_radii(res, points.view(), opt, bad), epsjoin::invalid_argument);
}

}  // namespace
