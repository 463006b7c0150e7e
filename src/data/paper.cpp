// The papers' Expo* datasets, value for value. Their generator drew every coordinate, point by
// point, from one std::mt19937 through libstdc++'s std::exponential_distribution<double>,
// redrew values outside [0, 1] from the same stream, and wrote them with "%.6g"; the joins ran
// on what was read back from that text. Only this mode uses a standard-library distribution:
// matching their library's behaviour is the point.
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>

#include "base/parallel.hpp"
#include "data/generate_detail.hpp"

namespace epsjoin::detail {

namespace {

// std::to_chars with a precision is specified as printf in the "C" locale with that precision,
// and std::from_chars as strtod in the "C" locale (both correctly rounded), so this is
// snprintf("%.6g") + strtod under round-to-nearest, without locale or stdio.
double round_to_6g_by_text(double value) noexcept {
  char text[32];
  const auto printed =
      std::to_chars(text, text + sizeof text, value, std::chars_format::general, 6);
  double back = value;
  std::from_chars(text, printed.ptr, back);
  return back;
}

constexpr std::array<double, 23> powers_of_ten = [] {
  std::array<double, 23> p{};
  double x = 1;
  for (double& v : p) {
    v = x;
    x *= 10;  // exact through 10^22
  }
  return p;
}();

}  // namespace

// The fast path, and why it equals the text round trip. Pick k with 10^5 <= |v| 10^k < 10^6;
// the 6 significant digits are then the integer r nearest to |v| 10^k, and strtod returns the
// double nearest to r / 10^k. For k <= 22 both r and 10^k are exact doubles, so one IEEE
// division yields exactly that double. The product |v| 10^k is off by at most half an ulp
// (< 6e-11 absolute below 10^6), so r is right unless the product lies that close to a half:
// products within 1e-6 of a half (ties included: printf breaks those by the exact binary
// value), k outside [0, 22], zeros and non-finite values take the text route. Where rounding of
// the product moves it across a decade border, either k gives the same r / 10^k (both round to
// that power of ten). The tests compare both routes with snprintf + strtod.
double round_to_6g(double value) noexcept {
  const double a = std::fabs(value);
  if (!(a > 0) || !std::isfinite(a)) return round_to_6g_by_text(value);
  // floor(log10 a) is floor(e2 log10 2) or one more, e2 the binary exponent: guess the first,
  // step once if the product is too large, and leave anything still out of range to the text
  // route. 78913 / 2^18 is log10 2 to 6 digits, plenty for the exponents that get this far.
  const int e2 = static_cast<int>(std::bit_cast<std::uint64_t>(a) >> 52) - 1023;
  int k = 5 - ((e2 * 78913) >> 18);
  if (k < 0 || k > 22) return round_to_6g_by_text(value);
  double scaled = a * powers_of_ten[static_cast<std::size_t>(k)];
  if (scaled >= 1e6 && k > 0) scaled = a * powers_of_ten[static_cast<std::size_t>(--k)];
  if (!(scaled >= 1e5 && scaled < 1e6)) return round_to_6g_by_text(value);
  // floor by truncation (scaled > 0); the difference is exact (Sterbenz).
  const double whole = static_cast<double>(static_cast<std::int64_t>(scaled));
  const double fraction = scaled - whole;
  if (std::fabs(fraction - 0.5) < 1e-6) return round_to_6g_by_text(value);
  const double r = fraction > 0.5 ? whole + 1 : whole;
  const double rounded = r / powers_of_ten[static_cast<std::size_t>(k)];
  return value < 0 ? -rounded : rounded;
}

void generate_paper_expo(const generator_spec& spec, double* out, unsigned threads) {
  // The stream is serial by nature: draw everything on one thread, then round in parallel.
  std::mt19937 engine(static_cast<std::uint32_t>(spec.seed));
  std::exponential_distribution<double> expo(spec.lambda);
  const std::size_t count = spec.n * spec.d;
  for (std::size_t k = 0; k < count; ++k) {
    double v = expo(engine);
    while (!(v >= 0.0 && v <= 1.0)) v = expo(engine);
    out[k] = v;
  }
  const unsigned workers = count < parallel_threshold ? 1 : threads;
  parallel_for(workers, count, std::size_t{1} << 16,
               [&](std::size_t begin, std::size_t end, unsigned) {
                 for (std::size_t k = begin; k < end; ++k) out[k] = round_to_6g(out[k]);
               });
}

}  // namespace epsjoin::detail
