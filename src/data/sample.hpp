#pragma once
// The per-point samplers of the normal (non-paper) generator modes. Every floating-point step is
// an IEEE basic operation (+ - * / sqrt) or exact (frexp, scaling by 2^k), evaluated in a fixed
// order with contraction into FMA disabled (see sample.cpp), so the values are bit-identical on
// every IEEE-754 machine and compiler: no libm call whose last bit varies by vendor or CPU.

#include <cstddef>
#include <vector>

#include "epsjoin/generate.hpp"

namespace epsjoin::detail {

/// Natural logarithm of a finite x > 0 from basic operations only (within about 2 ulp of the
/// exact value; identical everywhere, which std::log does not promise).
double portable_log(double x) noexcept;

/// The `spec.clusters` centres of a Gaussian spec, [clusters x d, row-major], uniform in [0, 1)^d.
std::vector<double> gaussian_centres(const generator_spec& spec);

/// Writes points [begin, end) of `spec` to `out` [(end - begin) x d, row-major]. `centres` is
/// gaussian_centres(spec) for Gaussian specs and ignored otherwise. Point i depends on
/// (seed, i, d and the distribution's parameters) only.
void sample_points(const generator_spec& spec, const double* centres, std::size_t begin,
                   std::size_t end, double* out) noexcept;

}  // namespace epsjoin::detail
