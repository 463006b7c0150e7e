#pragma once
// half_bound.hpp's scaling computed on the device, from the point copies the join already
// uploaded (so it costs milliseconds instead of host passes over the data, and its centre is in
// the copies' column order, whatever order the index chose).

#include <cuda_runtime.h>

#include <cstdint>

#include "tensor/fp16/half_bound.hpp"

namespace epsjoin::detail::fp16 {

/// The mean of the points of both sets ([n x d] each, row-major; `second` may be null when
/// n_second is 0) and the exponent half_exponent_for gives their largest |p_k - center_k| (0 when
/// every point is the same). Deterministic: partial sums are added in a fixed order. Waits for
/// `stream`.
template <class T>
half_scaling device_half_scaling(const T* first, std::uint32_t n_first, const T* second,
                                 std::uint32_t n_second, int d, cudaStream_t stream);

}  // namespace epsjoin::detail::fp16
