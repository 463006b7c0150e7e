// ted-join's decision band (src/tensor/ted/error_bound.hpp): the expanded formula, evaluated on the
// CPU in the order the kernel uses (fma chains for norms and dot product, then one add and one
// fma), stays within the band's undoubled bound of the exact squared distance, for data near
// and far from the origin, and pairs far inside or outside eps are decided without a re-check.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tensor/ted/error_bound.hpp"

namespace {

using epsjoin::detail::ted::expanded_formula_band;

struct expanded_result {
  double s, q_norm, c_norm;
};

expanded_result expanded(const std::vector<double>& q, const std::vector<double>& c) {
  double qn = 0, cn = 0, dot = 0;
  for (std::size_t k = 0; k < q.size(); ++k) {
    qn = std::fma(q[k], q[k], qn);
    cn = std::fma(c[k], c[k], cn);
    dot = std::fma(q[k], c[k], dot);
  }
  return {std::fma(-2.0, dot, qn + cn), qn, cn};
}

long double exact_squared(const std::vector<double>& q, const std::vector<double>& c) {
  long double s = 0;
  for (std::size_t k = 0; k < q.size(); ++k) {
    const long double diff = static_cast<long double>(q[k]) - c[k];
    s += diff * diff;
  }
  return s;
}

TEST(ted_error_bound, expanded_formula_stays_within_the_band) {
  std::mt19937_64 rng(2024);
  for (const int d : {1, 2, 3, 4, 7, 16, 33, 64, 128}) {
    for (const double offset : {0.0, 1.0, 1e3, 1e6}) {
      std::uniform_real_distribution<double> coord(offset - 1, offset + 1);
      std::normal_distribution<double> jitter(0.0, 1e-3);
      const auto band = expanded_formula_band(d, 0.1, 0x1p-53);
      double worst = 0;  // error over the undoubled bound
      for (int trial = 0; trial < 2000; ++trial) {
        std::vector<double> q(d), c(d);
        for (int k = 0; k < d; ++k) {
          q[k] = coord(rng);
          // Half the pairs close together, where cancellation is worst.
          c[k] = trial % 2 == 0 ? q[k] + jitter(rng) : coord(rng);
        }
        const expanded_result r = expanded(q, c);
        const long double error = std::fabs(static_cast<long double>(r.s) - exact_squared(q, c));
        const double bound = band.per_norm / 2 * (r.q_norm + r.c_norm);
        worst = std::max(worst, static_cast<double>(error / bound));
      }
      EXPECT_LE(worst, 1.0) << "d " << d << ", offset " << offset;
    }
  }
}

TEST(ted_error_bound, band_is_narrow_near_the_origin_and_grows_with_the_norms) {
  const auto band = expanded_formula_band(8, 0.01, 0x1p-53);
  // Unit-scale data: the band is some 1e-14 of eps^2 = 1e-4, so almost no pair is re-checked.
  EXPECT_LT(band.at(4.0, 4.0), 1e-13);
  EXPECT_GT(band.at(4.0, 4.0), 0.0);
  // Far from the origin the band widens in proportion to |q|^2 + |c|^2.
  EXPECT_NEAR(band.at(8e6, 8e6) / band.at(8.0, 8.0), 1e6, 1e3);
  // An FP32 join's direct formula is far coarser than FP64's, and so is its band.
  EXPECT_GT(expanded_formula_band(8, 0.01, 0x1p-24).fixed, 1e6 * band.fixed);
}

}  // namespace
