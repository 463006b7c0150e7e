#pragma once
// What the counting pass of an engine with an approximate mode (ted-join, meta-16q) tallies about
// its decisions near eps: [0] pairs inside the error band, [1] pairs only the approximate
// decision takes, [2] pairs only the exact decision takes; and the accuracy ratio (dissertation
// table 6.6) that follows. Outside the band both decisions agree, so these counts are all the
// ratio needs.

#include <array>
#include <cstdint>

#include "base/memory.cuh"

namespace epsjoin::detail {

class decision_tally {
 public:
  struct counts {
    std::uint64_t band = 0;
    std::uint64_t only_approximate = 0;
    std::uint64_t only_exact = 0;
  };

  /// Zeroes the counters, stream-ordered; the kernels add to the pointer returned.
  unsigned long long* reset(cudaStream_t stream) {
    counters_.reserve(3);
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(counters_.data(), 0, 3 * sizeof(unsigned long long), stream));
    return counters_.data();
  }

  /// The counters in ordered pairs: under halving each decision stands for two.
  counts read(bool halving) const {
    std::array<unsigned long long, 3> raw{};
    EPSJOIN_CUDA_TRY(cudaMemcpy(raw.data(), counters_.data(), sizeof raw, cudaMemcpyDeviceToHost));
    const std::uint64_t per = halving ? 2 : 1;
    return {raw[0] * per, raw[1] * per, raw[2] * per};
  }

 private:
  device_buffer<unsigned long long> counters_;
};

/// The approximate decision against the exact one, from the tally and the `pairs` (self pairs
/// not counted) the mode that ran found.
struct decision_accuracy {
  std::uint64_t exact_pairs;
  std::uint64_t approximate_pairs;
  double ratio;  ///< pairs both decisions take, over the exact pairs (1 when there are none)
};

inline decision_accuracy accuracy_of(const decision_tally::counts& c, std::uint64_t pairs,
                                     bool approximate_ran) {
  const std::uint64_t exact = approximate_ran ? pairs - c.only_approximate + c.only_exact : pairs;
  const std::uint64_t approximate = exact + c.only_approximate - c.only_exact;
  const std::uint64_t both = approximate - c.only_approximate;
  return {exact, approximate,
          exact == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(exact)};
}

}  // namespace epsjoin::detail
