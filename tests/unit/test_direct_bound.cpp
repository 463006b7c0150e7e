// The FP16 direct formula's bound (src/tensor/fp16/direct_bound.hpp), emulated on the CPU: FP16
// rounding by test::to_half, differences rounded to FP16, squares summed in float or in FP16.
// Pairs the thresholds call surely in are within eps and pairs they call surely out are not,
// about the centre and crowded at an edge of FP16's range, for d from 1 to 128; and the band is
// narrow: with FP32 sums nearly every pair from 0.9 to 1.1 eps is decided without a re-check.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/half_rounding.hpp"
#include "tensor/fp16/direct_bound.hpp"

namespace {

using namespace epsjoin::detail::fp16;
using epsjoin::test::to_half;

struct emulated {
  double s;       // s' as the kernels compute it
  double norm;    // |q| + |c| (unquantized)
  double exact2;  // |q - c|^2 in long double
};

emulated emulate(const std::vector<double>& q, const std::vector<double>& c, bool half_sums) {
  float sum = 0;
  double half_sum = 0;  // an FP16 value
  double qn = 0, cn = 0;
  long double exact = 0;
  for (std::size_t k = 0; k < q.size(); ++k) {
    const double qh = to_half(q[k]);
    const double ch = to_half(c[k]);
    const double diff = to_half(static_cast<float>(ch) - static_cast<float>(qh));
    const float square = static_cast<float>(diff) * static_cast<float>(diff);  // exact
    if (half_sums) {
      half_sum = to_half(static_cast<float>(half_sum) + square);
    } else {
      sum += square;
    }
    qn += q[k] * q[k];
    cn += c[k] * c[k];
    const long double delta = static_cast<long double>(q[k]) - c[k];
    exact += delta * delta;
  }
  return {half_sums ? half_sum : static_cast<double>(sum),
          std::sqrt(qn) + std::sqrt(cn), static_cast<double>(exact)};
}

TEST(direct_bound, surely_decisions_are_right_and_most_pairs_are_decided) {
  std::mt19937_64 rng(23);
  for (const bool half_sums : {false, true}) {
    for (const int d : {1, 3, 16, 40, 128}) {
      const direct_band band = direct_decision_band(d, half_sums, 0x1p-53);
      // Scaled units: coordinates below 2^14; FP16 sums cap eps at 2^6 (cap_for_half_sums).
      for (const double centre : {0.0, 12000.0}) {
        const double eps = half_sums ? 48.0 : 300.0;
        std::uniform_real_distribution<double> spread(-eps, eps), ratio(0.9, 1.1);
        std::normal_distribution<double> normal;
        int decided = 0, tried = 0;
        for (int pair = 0; pair < 400; ++pair) {
          std::vector<double> q(d), c(d), dir(d);
          double len = 0;
          for (int k = 0; k < d; ++k) {
            q[k] = centre + spread(rng);
            dir[k] = normal(rng);
            len += dir[k] * dir[k];
          }
          const double dist = eps * ratio(rng);
          for (int k = 0; k < d; ++k) c[k] = q[k] + dir[k] / std::sqrt(len) * dist;
          const emulated e = emulate(q, c, half_sums);
          const decision_thresholds t = direct_thresholds_for(band, eps, e.norm);
          ++tried;
          if (e.s <= t.lo) {
            ++decided;
            EXPECT_LE(e.exact2, eps * eps) << "d " << d << " surely in, but out";
          } else if (e.s > t.hi) {
            ++decided;
            EXPECT_GT(e.exact2, eps * eps) << "d " << d << " surely out, but in";
          }
        }
        // The band grows with d (FP16 sums: 2 (d + 2) 2^-10 of eps^2) and, near the edge, with
        // the norms through the quantization term.
        if (!half_sums && centre == 0.0 && d <= 40) {
          EXPECT_GT(decided, tried * 8 / 10) << "d " << d;
        }
        if (half_sums && centre == 0.0 && d <= 3) {
          EXPECT_GT(decided, tried / 2) << "d " << d;
        }
      }
    }
  }
}

TEST(direct_bound, half_sums_keep_eps_far_below_fp16_overflow) {
  for (const double eps : {1e-6, 0.3, 1.0, 64.0, 1e5}) {
    for (const int exponent : {-20, 0, 13, 40}) {
      const int capped = cap_for_half_sums(exponent, eps);
      EXPECT_LE(capped, exponent);
      EXPECT_LE(std::ldexp(eps, capped), 64.0) << eps << " " << exponent;
      const direct_band band = direct_decision_band(16, true, 0x1p-53);
      const decision_thresholds t = direct_thresholds_for(band, std::ldexp(eps, capped), 0.0);
      EXPECT_LT(t.hi, band.overflow);
    }
  }
  // FP32 sums have no such limit, and no overflow term.
  EXPECT_EQ(direct_decision_band(16, false, 0x1p-53).overflow, 0.0);
}

}  // namespace

// The emulation itself, against the compiler's own conversions where it has _Float16 (g++; the
// sanitized build's clang 14 has none): random values over the whole range, the subnormals and
// the overflow threshold included, exact ties between two FP16 values, and float inputs.
#if defined(__GNUC__) && !defined(__clang__)
TEST(half_rounding, matches_the_compilers_float16) {
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> significand(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 17), sign(0, 1);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(sign(rng) ? -significand(rng) : significand(rng), exponent(rng));
    ASSERT_EQ(to_half(x), static_cast<double>(static_cast<_Float16>(x))) << x;
    const auto f = static_cast<float>(x);
    ASSERT_EQ(to_half(f), static_cast<double>(static_cast<_Float16>(f))) << f;
  }
  for (const double step : {0x1p-24, 0x1p-14, 1.0, 32.0}) {  // subnormal, normal, largest steps
    for (int k = 0; k < 2048; ++k) {
      const double tie = (k + 0.5) * step;
      ASSERT_EQ(to_half(tie), static_cast<double>(static_cast<_Float16>(tie))) << tie;
    }
  }
  EXPECT_EQ(to_half(65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(to_half(65520.0)));
}
#endif
