#pragma once
// The float32 band of the CPU engines (cpu-grid, super-ego): thresholds that make a float32
// computation of the squared distance exact, with the few candidates between them re-checked in
// float64 from the caller's values.
//
// The squared distance s computed in float32 from float32 coordinates is within a proven bound of
// the exact one. With D the exact distance and D' the distance between the float32-rounded points,
// |D' - D| <= delta (the rounding of the coordinates, measured while converting) and
// |s - D'^2| <= gamma D'^2 + tiny (gamma = (d + 3) 2^-24, tiny covers underflow). Hence
//   s <= lo = (1 - gamma) (eps - delta)^2 - tiny  implies D <= eps  (a sure pair),
//   s >  hi = (1 + gamma) (eps + delta)^2 + tiny  implies D >  eps  (a sure non-pair),
// and only the few candidates in between are recomputed in float64 from the input values, exactly
// as the oracle computes them. The float32 result therefore equals the float64 one.

#include <cstddef>
#include <span>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail::cpu {

template <class T>
struct thresholds {
  T lo;  ///< s <= lo: within eps for sure
  T hi;  ///< s > hi: beyond eps for sure; otherwise recompute in float64
};

/// lo and hi for float32 given eps, d and the rounding of both sides (largest |converted -
/// exact| per dimension, in any one order of dimensions).
thresholds<float> float_thresholds(double eps, std::size_t d, std::span<const double> rounding_a,
                                   std::span<const double> rounding_b);
/// float64: the kernels sum the squares in their own order of dimensions (the grid's columns),
/// fused where the CPU has FMA, so their s lies within about d ulps of the oracle's sum, as the
/// oracle's does of the exact one. s <= lo is then a pair for sure, s > hi surely not, and the
/// few candidates between are decided as the oracle decides them (exact_within): a pair at
/// exactly eps is in or out as the oracle says, whatever the kernel's rounding. The band is
/// four times that bound; tiny covers sums in the subnormal range.
inline thresholds<double> double_thresholds(double eps, std::size_t d) {
  const double eps2 = eps * eps;
  const double band = static_cast<double>(d + 2) * 0x1p-50;
  const double tiny = static_cast<double>(d + 2) * 0x1p-1070;
  const double lo = eps2 * (1 - band) - tiny;
  return {lo > 0 ? lo : 0, eps2 * (1 + band) + tiny};
}

/// The oracle's test on input rows: sum over columns in order of (a - b)^2 <= eps^2, in float64.
bool exact_within(dataset_view a, std::size_t i, dataset_view b, std::size_t j, double eps2);

}  // namespace epsjoin::detail::cpu
