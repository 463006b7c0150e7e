#pragma once
// gds-join's distance test (GDS-Join, paper 002), for the query kernel (query_kernel.cuh): min(8, d) independent partial sums, so the
// loop of a high-dimensional point keeps eight multiply-adds in flight instead of one chain,
// and an exit once the partial sum passes eps^2, checked every eight dimensions. The engines'
// point copies hold the dimensions by decreasing variance, so the exit comes early.

namespace epsjoin::detail::agents {

inline constexpr int ilp_width = 8;

template <class T>
__device__ __forceinline__ bool within_ilp(const T* __restrict__ a, const T* __restrict__ b, int d,
                                           T eps2) {
  T part[ilp_width] = {};
  int k = 0;
  for (; k + ilp_width <= d; k += ilp_width) {
#pragma unroll
    for (int i = 0; i < ilp_width; ++i) {
      const T diff = a[k + i] - b[k + i];
      part[i] += diff * diff;
    }
    const T sum =
        ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    if (sum > eps2) return false;
  }
  // The tail (all of d < 8) spreads over the same partial sums.
#pragma unroll
  for (int i = 0; i < ilp_width; ++i) {
    if (k + i < d) {
      const T diff = a[k + i] - b[k + i];
      part[i] += diff * diff;
    }
  }
  const T sum =
      ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  return sum <= eps2;
}

}  // namespace epsjoin::detail::agents
