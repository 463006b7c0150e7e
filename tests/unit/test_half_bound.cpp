// meta-16q's numerics (src/tensor/fp16/half_bound.hpp): the scaling puts the data in FP16's
// range about its mean, and the FP16-FP32 expanded formula, emulated on the CPU (FP16 rounding
// by test::to_half, FP32 sums in float), stays inside the thresholds: pairs decided as surely in
// are within eps, pairs decided as surely out are not, about the centre and far from it. (The
// tensor cores' truncating sums are not emulated: the GPU tests place pairs around eps.)
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/half_rounding.hpp"
#include "tensor/fp16/half_bound.hpp"

using epsjoin::test::to_half;

namespace {

using namespace epsjoin::detail::fp16;

std::vector<double> unit_direction(std::mt19937_64& rng, int d) {
  std::normal_distribution<double> normal;
  std::vector<double> dir(static_cast<std::size_t>(d));
  double len = 0;
  for (double& x : dir) {
    x = normal(rng);
    len += x * x;
  }
  for (double& x : dir) x /= std::sqrt(len);
  return dir;
}

TEST(half_bound, scaling_centres_the_data_and_fills_fp16s_range) {
  std::vector<double> values = {1000.0, -3.0, 1002.0, 5.0, 1004.0, 1.0};  // 3 points, 2-D
  const epsjoin::dataset pts(values, 2);
  const half_scaling s = choose_half_scaling(pts.view(), {}, 2);
  ASSERT_EQ(s.center.size(), 2u);
  EXPECT_DOUBLE_EQ(s.center[0], 1002.0);
  EXPECT_DOUBLE_EQ(s.center[1], 1.0);
  // The largest |p - centre| is 4: scaled into [2^13, 2^14).
  const double largest = 4.0 * s.scale();
  EXPECT_GE(largest, half_scaled_max / 2);
  EXPECT_LT(largest, half_scaled_max);

  // A second set moves the centre; identical points leave the scale at 1.
  const epsjoin::dataset other(std::vector<double>{1002.0, 1.0}, 2);
  EXPECT_DOUBLE_EQ(choose_half_scaling(other.view(), other.view(), 1).center[0], 1002.0);
  EXPECT_EQ(choose_half_scaling(other.view(), {}, 1).exponent, 0);

  // Spreads near the ends of FP64's range stay finite.
  const epsjoin::dataset huge(std::vector<double>{-1e308, 1e308}, 1);
  const half_scaling h = choose_half_scaling(huge.view(), {}, 1);
  EXPECT_TRUE(std::isfinite(h.scale()));
  EXPECT_LT(1e308 * h.scale(), half_scaled_max);
  const epsjoin::dataset tiny(std::vector<double>{0.0, 1e-300}, 1);
  EXPECT_GT(choose_half_scaling(tiny.view(), {}, 1).exponent, 900);
}

struct emulated {
  double s;       // s' as the kernel computes it, FP32
  double norm2;   // |q~|^2 + |c~|^2
  double norm;    // |q| + |c| (unquantized)
  double exact2;  // |q - c|^2 in long double
};

emulated emulate(const std::vector<double>& q, const std::vector<double>& c) {
  float dot = 0;
  double qn2 = 0, cn2 = 0, qn = 0, cn = 0;
  long double exact = 0;
  for (std::size_t k = 0; k < q.size(); ++k) {
    const double qh = to_half(q[k]);
    const double ch = to_half(c[k]);
    dot += static_cast<float>(qh * ch);  // FP16 products are exact in FP32
    qn2 += qh * qh;
    cn2 += ch * ch;
    qn += q[k] * q[k];
    cn += c[k] * c[k];
    const long double diff = static_cast<long double>(q[k]) - c[k];
    exact += diff * diff;
  }
  const float sum = static_cast<float>(qn2) + static_cast<float>(cn2);
  const float s = std::fma(-2.0f, dot, sum);
  return {s, qn2 + cn2, std::sqrt(qn) + std::sqrt(cn), static_cast<double>(exact)};
}

TEST(half_bound, fp16_fp32_expanded_formula_is_decided_inside_the_thresholds) {
  std::mt19937_64 rng(2026);
  for (const int d : {1, 3, 16, 33, 128}) {
    // Points about the centre, and points crowded at one edge of the data, far from the centre
    // next to their distances: the band grows with the norms.
    for (const double edge : {-1.0, 0.9}) {
      const double eps = 0.05 * std::sqrt(static_cast<double>(d));
      std::uniform_real_distribution<double> coord(edge, 1.0);
      const half_band band = half_decision_band(d, 0x1p-53);
      const int exponent = 13;  // spread 2 -> 2^14 at most
      const double scale = std::ldexp(1.0, exponent), eps_scaled = eps * scale;
      int in = 0, out = 0;
      for (int trial = 0; trial < 3000; ++trial) {
        std::vector<double> q(d), c(d);
        const std::vector<double> dir = unit_direction(rng, d);
        // Distances from 0.9 eps to 1.1 eps, where the decisions are hard.
        const double r = eps * (0.9 + 0.2 * (trial % 101) / 100.0);
        for (int k = 0; k < d; ++k) {
          const double a = coord(rng);
          q[k] = a * scale;
          c[k] = (a + r * dir[k]) * scale;
        }
        const emulated e = emulate(q, c);
        const decision_thresholds t = thresholds_for(band, eps_scaled, e.norm, e.norm2);
        const double limit = eps_scaled * eps_scaled;
        if (e.s <= t.lo) {
          ++in;
          EXPECT_LE(e.exact2, limit) << "d " << d << " edge " << edge << " r/eps " << r / eps;
        } else if (e.s > t.hi) {
          ++out;
          EXPECT_GT(e.exact2, limit) << "d " << d << " edge " << edge << " r/eps " << r / eps;
        }
      }
      // The band must also decide most pairs about the centre: a band that re-checks everything
      // would be useless.
      EXPECT_GT(in + out, edge < 0 ? 3000 * 6 / 10 : 0) << "d " << d << " edge " << edge;
    }
  }
}

}  // namespace

namespace {

// Dissertation ch. 6: with FP16 accumulation the expanded formula cancels catastrophically. Its
// terms |q|^2 and |c|^2 are large next to the squared distance near eps, and FP16 keeps 11 bits
// of them, so s' = |q|^2 + |c|^2 - 2 q.c loses most of s. This is why meta-16q refuses
// accumulate=fp16: here, on points of [0, 1]^16 (the papers' data range) at distance 0.1, FP16
// sums get most squared distances wrong by more than a quarter, FP32 sums by a small fraction of
// a percent.
TEST(half_bound, fp16_accumulation_cancels_catastrophically) {
  std::mt19937_64 rng(66);
  std::uniform_real_distribution<double> coord(0.0, 1.0);
  const int d = 16, trials = 1000;
  const double r = 0.1;
  int fp16_far_off = 0;
  double fp32_worst = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<double> q(d), c(d);
    const std::vector<double> dir = unit_direction(rng, d);
    for (int k = 0; k < d; ++k) {
      q[k] = coord(rng);
      c[k] = q[k] + r * dir[k];
    }
    double qn16 = 0, cn16 = 0, dot16 = 0;  // FP16 values, every operation rounded to FP16
    float qn32 = 0, cn32 = 0, dot32 = 0;
    double exact = 0;
    for (int k = 0; k < d; ++k) {
      const double qh = to_half(q[k]), ch = to_half(c[k]);
      qn16 = to_half(qn16 + to_half(qh * qh));
      cn16 = to_half(cn16 + to_half(ch * ch));
      dot16 = to_half(dot16 + to_half(qh * ch));
      const auto qf = static_cast<float>(qh), cf = static_cast<float>(ch);
      qn32 += qf * qf;
      cn32 += cf * cf;
      dot32 += qf * cf;
      const double diff = qh - ch;
      exact += diff * diff;  // the distance of the FP16 points: rounding the input is not at stake
    }
    const double s16 = to_half(to_half(to_half(qn16 + cn16) - dot16) - dot16);
    const double s32 = static_cast<double>(qn32 + cn32 - 2.0f * dot32);
    if (std::abs(s16 - exact) > 0.25 * exact) ++fp16_far_off;
    fp32_worst = std::max(fp32_worst, std::abs(s32 - exact) / exact);
  }
  EXPECT_GT(fp16_far_off, trials / 2);
  EXPECT_LT(fp32_worst, 1e-3);
}

}  // namespace
