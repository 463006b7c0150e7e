// Paper mode: the papers' Expo datasets value for value, and the %.6g rounding it rests on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "data/generate_detail.hpp"
#include "data/philox.hpp"
#include "epsjoin/generate.hpp"
#include "support/seed.hpp"

namespace {

// What their text files hold: printf("%.6g") read back with strtod.
double via_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", v);
  return std::strtod(text, nullptr);
}

// The papers' generator, restated: one std::mt19937, libstdc++'s exponential distribution,
// point-major, values outside [0, 1] redrawn from the same stream, written with %.6g.
std::vector<double> paper_reference(std::uint32_t seed, double lambda, std::size_t count) {
  std::mt19937 engine(seed);
  std::exponential_distribution<double> expo(lambda);
  std::vector<double> out(count);
  for (double& x : out) {
    double v = expo(engine);
    while (v < 0 || v > 1) v = expo(engine);
    x = via_text(v);
  }
  return out;
}

std::vector<double> generated(const std::string& text) {
  const epsjoin::dataset ds = epsjoin::generate(epsjoin::parse_generator_spec(text));
  return {ds.f64(), ds.f64() + ds.n() * ds.d()};
}

TEST(paper_mode, equals_the_reference_loop) {
  // 2 x 100000 values: above the parallel threshold, so the rounding runs on several threads.
  EXPECT_EQ(generated("expo:2:100000:paper"), paper_reference(2137834274u, 40, 200000));
  EXPECT_EQ(generated("expo:3:1000:paper:seed=7"), paper_reference(7, 40, 3000));
  // A small lambda makes redraws frequent; they must come from the same stream, in order.
  EXPECT_EQ(generated("expo:2:5000:paper:lambda=0.5"), paper_reference(2137834274u, 0.5, 10000));
}

// The first outputs of the papers' generator (mt19937 seeded 2137834274, exponential with
// lambda = 40, %.6g) on libstdc++, printed once by this implementation. The reference loop
// above would follow a change in the standard library; these would not.
TEST(paper_mode, first_values_of_the_papers_generator) {
  const std::vector<double> first = {0.00408477, 0.0900415, 0.000180979,
                                     0.0564735,  0.0783719, 0.0204068};
  EXPECT_EQ(generated("expo:2:3:paper"), first);
  EXPECT_EQ(generated("expo:3:2:paper"), first);  // point-major: d only regroups the stream
  const std::vector<double> seed7 = {0.00644787, 0.0096038,  0.0956724,
                                     0.0152011,  0.00920469, 0.00765874};
  EXPECT_EQ(generated("expo:3:2:paper:seed=7"), seed7);
}

TEST(paper_mode, values_have_six_significant_digits_and_lie_in_unit_range) {
  for (const double v : generated("expo:4:20000:paper")) {
    ASSERT_TRUE(v >= 0 && v <= 1) << v;
    ASSERT_EQ(via_text(v), v);
    char text[64];
    std::snprintf(text, sizeof text, "%.5e", v);  // 6 significant digits hold it exactly...
    ASSERT_EQ(std::strtod(text, nullptr), v) << text;
  }
  const auto normal = generated("expo:2:1000");
  std::size_t longer = 0;  // ...which normal mode's full-precision values do not
  for (const double v : normal) longer += via_text(v) != v;
  EXPECT_GT(longer, 990u);
}

// round_to_6g's fast path against snprintf + strtod on values built to break it: random bit
// patterns, exact ties, near-ties, decade borders, the extremes.
TEST(round_to_6g, equals_snprintf_then_strtod) {
  using epsjoin::detail::round_to_6g;
  using limits = std::numeric_limits<double>;
  // clang-format off
  std::vector<double> cases = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-5, 1e-4, 0.1, 0.999999, 0.9999995,
                               0.99999949999999997, 1e22, 1e23, 123456.5, 1234565.0, 9999995.0,
                               limits::min(), limits::max(), limits::infinity(),
                               limits::denorm_min()};
  // clang-format on
  for (int j = 7; j <= 40; ++j) {  // m / 2^j: decimal expansions ending in 5, exact ties among them
    for (std::uint64_t m = 1; m < 4000; m += 2) {
      cases.push_back(std::ldexp(static_cast<double>(m), -j));
    }
  }
  for (int p = -30; p <= 30; ++p) {  // decade borders
    const double t = std::pow(10.0, p);
    for (double x = t, k = 0; k < 3; ++k) {
      cases.push_back(x);
      x = std::nextafter(x, 0.0);
    }
    cases.push_back(std::nextafter(t, INFINITY));
    cases.push_back(t * (1 - 5e-7));
    cases.push_back(std::nextafter(t * (1 - 5e-7), 0.0));
  }
  epsjoin::detail::counter_stream stream(epsjoin::test::test_seed(), {}, 1);
  for (int k = 0; k < 300000; ++k) {
    const double u = stream.next_unit();
    cases.push_back(std::ldexp(1 + u, static_cast<int>(stream.next_below(90)) - 70));  // 1e-21..1e6
    cases.push_back(-std::log1p(-u) / 40);  // what paper mode rounds
    const double scaled = std::floor(stream.next_unit() * 9e5 + 1e5) + 0.5;  // near-ties
    cases.push_back(std::nextafter(scaled * 1e-6, stream.next_u64() & 1 ? 0.0 : 1.0));
  }
  for (const double v : cases) {
    const double want = via_text(v);
    const double got = round_to_6g(v);
    ASSERT_TRUE(got == want && std::signbit(got) == std::signbit(want))
        << std::hexfloat << v << " -> " << got << ", snprintf + strtod give " << want;
  }
  EXPECT_TRUE(std::isnan(round_to_6g(std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace
