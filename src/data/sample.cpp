#include "data/sample.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

#include "data/philox.hpp"

// Fusing a * b + c into one FMA rounds once instead of twice, so a compiler that contracts on
// one machine (FMA hardware, -march=native) and not on another would change the last bits of
// the data. Forbid it for this file. (Clang given an explicit -ffp-contract=fast overrides
// this; nothing in the project passes that.)
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace epsjoin::detail {

namespace {

// ln 2 split so that e * ln2_hi is exact for |e| < 2^11 (ln2_hi has 32 significant bits).
constexpr double ln2_hi = 6.93147180369123816490e-01;
constexpr double ln2_lo = 1.90821492927058770002e-10;

// Inlined into the samplers: a call would spill every SSE register on each value.
inline double log_basic(double x) noexcept {
  // x = m 2^e with m in [c, 2c), c just below sqrt(1/2), by integer arithmetic on the bits:
  // exact, and branch-free (a test on m would be mispredicted every other value).
  std::int64_t bits = std::bit_cast<std::int64_t>(x);
  int e = 0;
  if ((bits >> 52) == 0) {  // subnormal: scale into the normal range first, exactly
    bits = std::bit_cast<std::int64_t>(x * 0x1p54);
    e = -54;
  }
  constexpr std::int64_t c = 0x3FE6A09E00000000;  // 0.70710677..., sqrt(1/2) = 0.70710678...
  const std::int64_t shift = (bits - c) >> 52;    // floor((bits - c) / 2^52)
  e += static_cast<int>(shift);
  const double m = std::bit_cast<double>(bits - shift * (std::int64_t{1} << 52));
  // m in [sqrt(1/2), sqrt(2)) within 1e-9: ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s =
  // (m-1)/(m+1), |s| < 0.1716; the terms through s^23 leave a truncation error below 2^-60
  // relative. The polynomial in z = s^2 is evaluated in Estrin's order (a fixed order all the same)
  // to shorten the chain of dependent operations.
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  const double z2 = z * z;
  const double z4 = z2 * z2;
  const double z8 = z4 * z4;
  const double q0 = 2.0 / 3.0 + z * (2.0 / 5.0);
  const double q1 = 2.0 / 7.0 + z * (2.0 / 9.0);
  const double q2 = 2.0 / 11.0 + z * (2.0 / 13.0);
  const double q3 = 2.0 / 15.0 + z * (2.0 / 17.0);
  const double q4 = 2.0 / 19.0 + z * (2.0 / 21.0);
  const double r0 = q0 + z2 * q1;
  const double r1 = q2 + z2 * q3;
  const double r2 = q4 + z2 * (2.0 / 23.0);
  const double p = (r0 + z4 * r1) + z8 * r2;
  const double log_m = 2.0 * s + s * (z * p);
  const double de = static_cast<double>(e);
  return de * ln2_hi + (de * ln2_lo + log_m);
}

// Exponential(lambda) by inversion, redrawing values outside [0, 1] (in practice only above 1).
// 1 - u is exact and in (0, 1], so the logarithm is finite.
double exponential_value(counter_stream& stream, double lambda) noexcept {
  for (;;) {
    const double v = -log_basic(1.0 - stream.next_unit()) / lambda;
    if (v >= 0.0 && v <= 1.0) return v == 0.0 ? 0.0 : v;  // u = 0 gives -0.0; store +0.0
  }
}

// Two independent standard normals by Marsaglia's polar method: needs only log and sqrt, both
// portable here, unlike Box-Muller's sin and cos.
void normal_pair(counter_stream& stream, double& z0, double& z1) noexcept {
  for (;;) {
    const double x = 2.0 * stream.next_unit() - 1.0;  // exact: a multiple of 2^-52 in [-1, 1)
    const double y = 2.0 * stream.next_unit() - 1.0;
    const double s = x * x + y * y;
    if (s >= 1.0 || s == 0.0) continue;
    const double f = std::sqrt(-2.0 * log_basic(s) / s);
    z0 = x * f;
    z1 = y * f;
    return;
  }
}

void uniform_point(counter_stream& stream, std::size_t d, double* out) noexcept {
  for (std::size_t k = 0; k < d; ++k) out[k] = stream.next_unit();
}

void exponential_point(counter_stream& stream, std::size_t d, double lambda, double* out) noexcept {
  for (std::size_t k = 0; k < d; ++k) out[k] = exponential_value(stream, lambda);
}

// No clamping: a blob near the border of [0, 1]^d spills over it, as a Gaussian should.
void gaussian_point(counter_stream& stream, const generator_spec& spec, const double* centres,
                    double* out) noexcept {
  const double* centre =
      centres + stream.next_below(static_cast<std::uint32_t>(spec.clusters)) * spec.d;
  for (std::size_t k = 0; k < spec.d; k += 2) {
    double z0 = 0;
    double z1 = 0;
    normal_pair(stream, z0, z1);
    out[k] = centre[k] + spec.sigma * z0;
    if (k + 1 < spec.d) out[k + 1] = centre[k + 1] + spec.sigma * z1;
  }
}

}  // namespace

double portable_log(double x) noexcept { return log_basic(x); }

std::vector<double> gaussian_centres(const generator_spec& spec) {
  std::vector<double> centres(spec.clusters * spec.d);
  for (std::size_t c = 0; c < spec.clusters; ++c) {
    counter_stream stream(spec.seed, stream_tag::gaussian_centre, c);
    uniform_point(stream, spec.d, centres.data() + c * spec.d);
  }
  return centres;
}

void sample_points(const generator_spec& spec, const double* centres, std::size_t begin,
                   std::size_t end, double* out) noexcept {
  for (std::size_t i = begin; i < end; ++i, out += spec.d) {
    switch (spec.dist) {
      case distribution::uniform: {
        counter_stream stream(spec.seed, stream_tag::uniform_point, i);
        uniform_point(stream, spec.d, out);
        break;
      }
      case distribution::exponential: {
        counter_stream stream(spec.seed, stream_tag::exponential_point, i);
        exponential_point(stream, spec.d, spec.lambda, out);
        break;
      }
      case distribution::gaussian_clusters: {
        counter_stream stream(spec.seed, stream_tag::gaussian_point, i);
        gaussian_point(stream, spec, centres, out);
        break;
      }
    }
  }
}

}  // namespace epsjoin::detail
