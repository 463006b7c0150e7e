#pragma once
// The batch-size model of paper 001 sec. 5.4: response time
//   R(b_s) = T1 + n_streams * T2(b_s) + theta * n_b(b_s),   n_b = ceil(|R| / b_s),
// with T2(b_s) = pinned_seconds_per_pair * b_s the cost of allocating a pinned staging buffer
// and theta the fixed cost of one batch (launch, synchronisation, copies). epsjoin keeps its
// staging buffers across batches and joins, so T2 is only paid for the part of a buffer that is
// not already allocated.

#include <cstdint>
#include <string>

namespace epsjoin::detail {

struct batch_model {
  double pinned_seconds_per_pair = 0;  ///< T2 / b_s, measured on this machine
  double batch_overhead_seconds = 0;   ///< theta, measured on this machine
};

struct batch_size_limits {
  std::uint64_t already_allocated = 0;  ///< pairs each stream's buffers hold already
  std::uint64_t min_pairs = 1 << 20;    ///< below this, kernels are too small to fill the GPU
  std::uint64_t max_pairs = 0;          ///< what device and host memory allow per stream
  int n_streams = 3;
};

/// The b_s minimising the model's R for an expected result of `estimated_pairs`, within limits.
std::uint64_t choose_batch_pairs(const batch_model& model, std::uint64_t estimated_pairs,
                                 const batch_size_limits& limits);

/// Modelled overhead (the part of R that depends on b_s) for a given b_s.
double batch_overhead(const batch_model& model, std::uint64_t estimated_pairs,
                      std::uint64_t batch_pairs, const batch_size_limits& limits);

/// The model parameters cached for `device_key` under the user's cache directory
/// ($XDG_CACHE_HOME or ~/.cache, then epsjoin/batch-model.txt); false when absent or unreadable.
bool load_batch_model(const std::string& device_key, batch_model& model);
/// Stores them (best effort: a cache that cannot be written is not an error).
void store_batch_model(const std::string& device_key, const batch_model& model);

}  // namespace epsjoin::detail
