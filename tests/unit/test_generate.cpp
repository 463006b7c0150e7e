// The synthetic generators: bit-reproducibility, independence from the thread count, the
// distributions' shapes, and the papers' Expo datasets value for value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "data/generate_detail.hpp"
#include "data/philox.hpp"
#include "data/sample.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/generate.hpp"
#include "support/seed.hpp"

namespace {

using epsjoin::dataset;
using epsjoin::generate;
using epsjoin::parse_generator_spec;

dataset make(const std::string& text) { return generate(parse_generator_spec(text)); }

bool same_bytes(const dataset& a, const dataset& b) {
  return a.n() == b.n() && a.d() == b.d() &&
         std::memcmp(a.f64(), b.f64(), a.n() * a.d() * sizeof(double)) == 0;
}

std::vector<double> values(const dataset& ds) { return {ds.f64(), ds.f64() + ds.n() * ds.d()}; }

TEST(philox, random123_known_answers) {
  using epsjoin::detail::philox4x32_10;
  using block = epsjoin::detail::philox_block;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(portable_log, close_to_std_log) {
  using epsjoin::detail::portable_log;
  EXPECT_EQ(portable_log(1.0), 0.0);
  EXPECT_EQ(portable_log(0.5), -std::log(2.0));
  using limits = std::numeric_limits<double>;
  const double specials[] = {
      0x1p-53, 1 - 0x1p-53, 0.70710678118654746,  0.70710678118654757, 1.4142135623730949,
      2.0,     1e300,       limits::denorm_min(), limits::min() / 3};
  for (const double x : specials) {
    EXPECT_NEAR(portable_log(x), std::log(x), 4e-16 * std::fabs(std::log(x))) << x;
  }
  epsjoin::detail::counter_stream stream(epsjoin::test::test_seed(), {}, 0);
  for (int k = 0; k < 200000; ++k) {
    const double x = 1.0 - stream.next_unit();  // (0, 1], like the generator's arguments
    const double want = std::log(x);
    ASSERT_LE(std::fabs(portable_log(x) - want), 4e-16 * std::fabs(want) + 1e-300) << x;
  }
}

TEST(generate, shape_and_empty) {
  const dataset e = make("uniform:5:0");
  EXPECT_EQ(e.n(), 0u);
  const dataset g = make("gauss:3:7:clusters=2");
  EXPECT_EQ(g.n(), 7u);
  EXPECT_EQ(g.d(), 3u);
  EXPECT_EQ(g.type(), epsjoin::scalar_type::f64);
}

TEST(generate, refuses_invalid_hand_built_specs) {
  epsjoin::generator_spec spec;
  spec.d = 0;
  EXPECT_THROW(generate(spec), epsjoin::invalid_argument);
  spec.d = 2;
  spec.n = std::size_t{1} << 32;
  EXPECT_THROW(generate(spec), epsjoin::invalid_argument);
  spec.n = 10;
  spec.paper = true;  // uniform
  EXPECT_THROW(generate(spec), epsjoin::invalid_argument);
  spec.dist = epsjoin::distribution::exponential;
  spec.lambda = 0;
  EXPECT_THROW(generate(spec), epsjoin::invalid_argument);
}

// Found by fuzz_generate_spec: gauss:3:15:sigma=1e308 generated infinities. The largest sigma
// accepted keeps every coordinate finite, even far in the tails.
TEST(generate, sigma_is_bounded_so_points_stay_finite) {
  epsjoin::generator_spec spec = parse_generator_spec("gauss:3:20000:clusters=4");
  spec.sigma = 1e308;
  EXPECT_THROW(generate(spec), epsjoin::invalid_argument);
  spec.sigma = std::nextafter(epsjoin::detail::max_sigma, 2 * epsjoin::detail::max_sigma);
  EXPECT_THROW(generate(spec), epsjoin::invalid_argument);
  spec.sigma = epsjoin::detail::max_sigma;
  const dataset pts = generate(spec);
  for (const double v : values(pts)) ASSERT_TRUE(std::isfinite(v)) << v;
}

TEST(generate, same_spec_same_bytes_other_seed_other_values) {
  for (const std::string text : {"uniform:3:5000", "expo:2:5000", "gauss:4:5000:clusters=5"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(same_bytes(make(text), make(text)));
    const auto a = values(make(text + ":seed=1"));
    const auto b = values(make(text + ":seed=2"));
    std::size_t equal = 0;
    for (std::size_t k = 0; k < a.size(); ++k) equal += a[k] == b[k];
    EXPECT_EQ(equal, 0u);
  }
}

TEST(generate, distributions_draw_from_separate_streams) {
  // Same seed, uniform vs exponential: the exponential values are not transforms of the uniform.
  const auto u = values(make("uniform:1:1000"));
  const auto e = values(make("expo:1:1000:lambda=1"));
  std::size_t matches = 0;
  for (std::size_t k = 0; k < u.size(); ++k) {
    matches += std::fabs(-std::log1p(-u[k]) - e[k]) < 1e-12;
  }
  EXPECT_LT(matches, 5u);
}

TEST(generate, independent_of_thread_count) {
  for (const std::string text : {"uniform:3:20000", "expo:2:20000:lambda=3",
                                 "gauss:5:20000:clusters=7", "expo:2:70000:paper"}) {
    SCOPED_TRACE(text);
    const auto spec = parse_generator_spec(text);
    const dataset one = epsjoin::detail::generate(spec, 1);
    EXPECT_TRUE(same_bytes(one, epsjoin::detail::generate(spec, 3)));
    EXPECT_TRUE(same_bytes(one, epsjoin::detail::generate(spec, 8)));
  }
}

TEST(generate, small_n_is_a_prefix_of_large_n) {
  // Point i depends on (seed, i) only, so a small set (one thread) is the head of a large one
  // (above the parallel threshold, all hardware threads).
  for (const std::string head : {"uniform:3:", "expo:2:", "gauss:4:"}) {
    SCOPED_TRACE(head);
    const auto small = values(make(head + "1000"));
    const auto large = values(make(head + "100k"));
    ASSERT_GE(100000u * parse_generator_spec(head + "1").d, epsjoin::detail::parallel_threshold);
    EXPECT_TRUE(std::equal(small.begin(), small.end(), large.begin()));
  }
}

// Generator output pinned bit for bit: a change here changes every dataset ever generated, and
// these values must come out the same on every machine and compiler.
TEST(generate, pinned_first_values) {
  EXPECT_EQ(values(make("uniform:3:2")),
            (std::vector<double>{0x1.d1848d8925a3cp-3, 0x1.3328804541036p-1, 0x1.30800590083dp-3,
                                 0x1.76f07dca171c5p-1, 0x1.3d2f91ab5b0fp-3, 0x1.1700ad4277b1ap-2}));
  EXPECT_EQ(values(make("expo:3:2")),
            (std::vector<double>{0x1.11c36bfc0c0dep-6, 0x1.5aaf7a274cc08p-5, 0x1.6f3ffc90498d8p-6,
                                 0x1.1ca051e68ec7p-5, 0x1.b1c7f2fcd51c5p-6, 0x1.4cba40c42968dp-7}));
  EXPECT_EQ(values(make("gauss:3:2:clusters=4:sigma=0.05")),
            (std::vector<double>{0x1.a3c152c7dd697p-2, 0x1.3174eab47bfc8p-2, 0x1.fb1d609d593ccp-2,
                                 0x1.baf7ff5177914p-2, 0x1.bccdb02c12825p-4, 0x1.1276991726d1p-1}));
}

// FNV-1a over the bytes of a whole set: catches drift that the first values above are too few
// to show: built with -mfma and without this library's contraction guard, these fail.
std::uint64_t fnv1a(const dataset& ds) {
  std::uint64_t h = 0xcbf29ce484222325u;
  const auto* bytes = reinterpret_cast<const unsigned char*>(ds.f64());
  for (std::size_t k = 0; k < ds.n() * ds.d() * sizeof(double); ++k) {
    h = (h ^ bytes[k]) * 0x100000001b3u;
  }
  return h;
}

TEST(generate, pinned_checksums) {
  EXPECT_EQ(fnv1a(make("uniform:3:10000")), 0x26717c159b51762eu);
  EXPECT_EQ(fnv1a(make("expo:3:10000:lambda=5")), 0xfd83ddc8afdf6220u);
  EXPECT_EQ(fnv1a(make("gauss:5:10000:clusters=9:sigma=0.1")), 0x9207f44f86a13256u);
}

TEST(generate, uniform_moments_and_range) {
  const auto v = values(make("uniform:4:50000"));
  double sum = 0;
  double sum2 = 0;
  for (const double x : v) {
    ASSERT_TRUE(x >= 0 && x < 1) << x;
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / static_cast<double>(v.size());
  EXPECT_NEAR(mean, 0.5, 0.005);  // the mean's standard error is 6.5e-4
  EXPECT_NEAR(sum2 / static_cast<double>(v.size()) - mean * mean, 1.0 / 12, 0.002);
  EXPECT_LT(*std::min_element(v.begin(), v.end()), 1e-4);
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 1 - 1e-4);
}

// Mean of exponential(lambda) conditioned on [0, 1]: 1/lambda - e^-lambda / (1 - e^-lambda).
double truncated_mean(double lambda) {
  return 1 / lambda - std::exp(-lambda) / (1 - std::exp(-lambda));
}

TEST(generate, exponential_mean_and_range) {
  for (const double lambda : {40.0, 2.0, 0.5}) {
    SCOPED_TRACE(lambda);
    const auto v = values(make("expo:2:100000:lambda=" + std::to_string(lambda)));
    double sum = 0;
    for (const double x : v) {
      ASSERT_TRUE(x >= 0 && x <= 1 && !std::signbit(x)) << x;
      sum += x;
    }
    // Standard error of the mean is below 1/(lambda sqrt(2e5)) and below 0.29/sqrt(2e5).
    EXPECT_NEAR(sum / static_cast<double>(v.size()), truncated_mean(lambda),
                8 * std::min(1 / lambda, 0.29) / std::sqrt(2e5));
    if (lambda < 1) {  // many redraws happen, and the tail reaches 1
      EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.999);
    }
  }
}

TEST(generate, gaussian_points_near_their_centres) {
  const auto spec = parse_generator_spec("gauss:8:20000:clusters=16:sigma=0.01");
  const auto centres = epsjoin::detail::gaussian_centres(spec);
  for (const double c : centres) ASSERT_TRUE(c >= 0 && c < 1);
  const dataset pts = generate(spec);
  std::vector<std::size_t> members(spec.clusters);
  double residual2 = 0;
  for (std::size_t i = 0; i < pts.n(); ++i) {
    std::size_t best = 0;
    double best_d2 = INFINITY;
    for (std::size_t c = 0; c < spec.clusters; ++c) {
      double d2 = 0;
      for (std::size_t k = 0; k < spec.d; ++k) {
        const double diff = pts.f64()[i * spec.d + k] - centres[c * spec.d + k];
        d2 += diff * diff;
      }
      if (d2 < best_d2) best_d2 = d2, best = c;
    }
    ++members[best];
    residual2 += best_d2;
    ASSERT_LT(std::sqrt(best_d2), 8 * spec.sigma) << "point " << i;  // chi_8 > 8: p ~ 1e-10
  }
  const double sigma_hat = std::sqrt(residual2 / static_cast<double>(pts.n() * spec.d));
  EXPECT_NEAR(sigma_hat, spec.sigma, 0.02 * spec.sigma);
  for (const std::size_t m : members) EXPECT_NEAR(m, 20000.0 / 16, 250);
}

TEST(generate, gaussian_sigma_zero_gives_the_centres_and_odd_d_works) {
  const auto spec = parse_generator_spec("gauss:3:500:clusters=3:sigma=0");
  const auto centres = epsjoin::detail::gaussian_centres(spec);
  const dataset pts = generate(spec);
  for (std::size_t i = 0; i < pts.n(); ++i) {
    const double* p = pts.f64() + i * 3;
    bool found = false;
    for (std::size_t c = 0; c < 3; ++c) found |= std::equal(p, p + 3, centres.data() + c * 3);
    ASSERT_TRUE(found) << "point " << i;
  }
}

}  // namespace

namespace {

// A rank's share of a generated set: the same values as the whole set's rows, bit for bit.
TEST(generate_rows, equal_the_rows_of_the_whole_set) {
  for (const char* text : {"uniform:3:50000:seed=11", "expo:1:40000:seed=12",
                           "gauss:5:30000:clusters=7:sigma=0.05:seed=13", "uniform:2:1"}) {
    SCOPED_TRACE(text);
    const epsjoin::generator_spec spec = parse_generator_spec(text);
    const dataset whole = generate(spec);
    const std::size_t n = spec.n, d = spec.d;
    for (const auto& [first, count] : std::vector<std::pair<std::size_t, std::size_t>>{
             {0, n}, {0, n / 3}, {n / 3, n / 2}, {n - 1, 1}, {n, 0}, {n / 2, 0}}) {
      const dataset part = epsjoin::generate_rows(spec, first, count);
      ASSERT_EQ(part.n(), count);
      ASSERT_EQ(part.d(), d);
      const double* rows = static_cast<const double*>(whole.view().data) + first * d;
      EXPECT_EQ(0, count == 0 ? 0 : std::memcmp(part.view().data, rows, count * d * sizeof(double)))
          << "rows " << first << " + " << count;
    }
  }
}

TEST(generate_rows, refuses_paper_specs_and_rows_beyond_the_set) {
  EXPECT_THROW(epsjoin::generate_rows(parse_generator_spec("expo:2:1000:paper=1"), 0, 10),
               epsjoin::invalid_argument);
  const epsjoin::generator_spec spec = parse_generator_spec("uniform:2:1000");
  EXPECT_THROW(epsjoin::generate_rows(spec, 990, 11), epsjoin::invalid_argument);
  EXPECT_THROW(epsjoin::generate_rows(spec, 1001, 0), epsjoin::invalid_argument);
  epsjoin::generator_spec flat = spec;
  flat.d = 0;  // past the parser: generate_rows validates the spec itself
  EXPECT_THROW(epsjoin::generate_rows(flat, 0, 1), epsjoin::invalid_argument);
}

}  // namespace
