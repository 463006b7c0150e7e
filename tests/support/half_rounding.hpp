#pragma once
// FP16 (IEEE binary16) rounding for the tests that emulate the tensor cores' numerics on the CPU.
// Written out rather than taken from _Float16, which clang 14 (the sanitized build's compiler)
// does not have on x86-64.

#include <algorithm>
#include <cmath>

namespace epsjoin::test {

/// x rounded once to the nearest binary16 value, ties to even, as a double (which holds every
/// binary16 value exactly): 11 significant bits down to 2^-14, a fixed step of 2^-24 below it
/// (the subnormals), and infinity from 65520 up, where the rounded value would exceed 65504.
inline double to_half(double x) {
  if (!std::isfinite(x) || x == 0) return x;
  int exponent = 0;
  std::frexp(x, &exponent);  // |x| in [2^(exponent-1), 2^exponent)
  const int step = std::max(exponent - 11, -24);
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(x, -step)), step);
  return std::abs(rounded) > 65504.0 ? std::copysign(INFINITY, x) : rounded;
}

}  // namespace epsjoin::test
