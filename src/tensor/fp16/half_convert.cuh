#pragma once
// The conversion of a join's points into their FP16 copies (half_points.cuh): translated and
// scaled (half_bound.hpp), rounded, padded to whole k steps of the MMA, with their norms.

#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

namespace epsjoin::detail::fp16 {

/// d rounded up to whole k steps of the MMA.
__host__ __device__ constexpr unsigned padded_dims(int d) {
  return (static_cast<unsigned>(d) + 15) / 16 * 16;
}

/// Converts points to FP16 after translating and scaling them (half_bound.hpp), with their
/// squared norms (of the FP16 values) and norms (of the exact ones, rounded up).
template <class T>
__global__ void to_half_kernel(const T* points, std::uint32_t n, int d, const double* center,
                               double half_scale, __half* out, float2* norms) {
  const std::uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  const unsigned dp = padded_dims(d);
  const T* x = points + static_cast<std::size_t>(p) * d;
  __half* to = out + static_cast<std::size_t>(p) * dp;
  double norm2 = 0, exact2 = 0;
  for (int k = 0; k < d; ++k) {
    // Halves first: the difference of two finite doubles can overflow (half_scaling.cpp).
    const double v = (0.5 * static_cast<double>(x[k]) - 0.5 * center[k]) * half_scale;
    const __half h = __double2half(v);
    const double rounded = static_cast<double>(__half2float(h));
    to[k] = h;
    norm2 = fma(rounded, rounded, norm2);
    exact2 = fma(v, v, exact2);
  }
  for (unsigned k = d; k < dp; ++k) to[k] = __float2half(0.0f);
  // The FP64 sums err by d 2^-53 relative, far below what the band's doubling leaves.
  norms[p] = {__double2float_rn(norm2), __double2float_ru(sqrt(exact2) * (1.0 + 0x1p-40))};
}

/// Fills `out` ([n x padded_dims(d)]) and `norms` ([n]) from `points` ([n x d]).
template <class T>
void launch_to_half(const T* points, std::uint32_t n, int d, const double* center,
                    double half_scale, __half* out, float2* norms, cudaStream_t stream);

}  // namespace epsjoin::detail::fp16
