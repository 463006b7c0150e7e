#pragma once
// The FP16 copies of a join's points that meta-16q, meta-1q and gds-join's FP16 arithmetic read:
// translated and scaled as half_bound.hpp says (the scaling chosen on the device,
// device_scaling.cuh), rounded to FP16, padded to whole k steps of the MMA, with each point's
// squared norm (of the FP16 values) and norm (of the exact ones, rounded up). A self-join keeps
// one copy.

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/memory.cuh"
#include "gpu/agents/kernel_contract.cuh"
#include "tensor/fp16/device_scaling.cuh"
#include "tensor/fp16/direct_bound.hpp"
#include "tensor/fp16/half_bound.hpp"
#include "tensor/fp16/half_convert.cuh"

namespace epsjoin::detail::fp16 {

struct half_arrays {
  const __half* query_half = nullptr;  ///< [nq x padded_dims(d)] by query position
  const __half* data_half = nullptr;   ///< [n x padded_dims(d)] by data position
  const float2* query_norms = nullptr;
  const float2* data_norms = nullptr;
};

class half_points {
 public:
  /// Chooses the scaling (half_bound.hpp) from the view's points on the device, then converts
  /// them (query positions [0, n_queries), data [0, n_data)). `half_sums_eps`: with FP16 sums,
  /// the join's eps, which caps the scale (direct_bound.hpp); 0 otherwise.
  template <class T>
  half_arrays convert(const row_join::join_view<T>& view, std::uint32_t n_queries,
                      std::uint32_t n_data, double half_sums_eps, cudaStream_t stream) {
    const bool self = view.query_points == view.data_points;
    scaling_ = device_half_scaling<T>(view.data_points, n_data, self ? nullptr : view.query_points,
                                      self ? 0 : n_queries, view.d, stream);
    if (half_sums_eps > 0) {
      scaling_.exponent = cap_for_half_sums(scaling_.exponent, half_sums_eps);
    }
    center_.reserve(std::max<std::size_t>(1, scaling_.center.size()));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(center_.data(), scaling_.center.data(),
                                     scaling_.center.size() * sizeof(double),
                                     cudaMemcpyHostToDevice, stream));
    const int d = view.d;
    const std::size_t dp = padded_dims(d);
    auto one = [&](const T* points, std::uint32_t n, device_buffer<__half>& half,
                   device_buffer<float2>& norms) {
      half.reserve(std::max<std::size_t>(1, n * dp));
      norms.reserve(std::max<std::size_t>(1, n));
      // Halved in the kernel (see to_half_kernel), so twice the scale here.
      launch_to_half<T>(points, n, d, center_.data(), 2.0 * scaling_.scale(), half.data(),
                        norms.data(), stream);
    };
    half_arrays a;
    one(view.data_points, n_data, data_half_, data_norms_);
    a.data_half = data_half_.data();
    a.data_norms = data_norms_.data();
    if (view.query_points == view.data_points) {
      a.query_half = a.data_half;
      a.query_norms = a.data_norms;
    } else {
      one(view.query_points, n_queries, query_half_, query_norms_);
      a.query_half = query_half_.data();
      a.query_norms = query_norms_.data();
    }
    return a;
  }

  /// The centre is in the point copies' column order (the index may reorder the columns).
  const half_scaling& scaling() const { return scaling_; }

 private:
  half_scaling scaling_;  // its centre outlives the asynchronous copy
  device_buffer<double> center_;
  device_buffer<__half> data_half_, query_half_;
  device_buffer<float2> data_norms_, query_norms_;
};

/// The decision fields meta-16q's and meta-1q's kernel views share: the approximate decision's
/// threshold (the scaled eps squared, rounded up), the mode, and the counting pass's tally.
template <class View>
void set_half_decision(View& view, double scaled_eps, bool approximate, unsigned long long* tally) {
  view.eps2 = float_up(scaled_eps * scaled_eps);
  view.approximate = approximate;
  view.tally = tally;
}

}  // namespace epsjoin::detail::fp16
