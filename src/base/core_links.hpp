#pragma once
// Where the filling pass of a linking join (core/device_links.hpp) links the pairs it finds: a
// union-find of core points and each other point's smallest core neighbour, in device memory.
// Plain C++, so that the consumer's interface stays CUDA-free; the device side is
// core_links.cuh.

#include <cstdint>

#include "base/host_device.hpp"

namespace epsjoin::detail {

/// Indexed by the positions of the self-join's index (where each query is also a data point),
/// so that a pair's two entries lie near each other in memory: caller ids are in the caller's
/// order, which for most data has nothing to do with space. For an ordered pair (q, j) within
/// eps with q core: j core unites q's and j's sets; j not core lowers j's min_core to q's caller
/// id, as the host merge's rule is by caller id. Every set's root is its smallest position,
/// whatever order the pairs arrive in.
struct core_links {
  /// A core point's parent position, itself at a root; `not_core` for the other points.
  std::uint32_t* parent = nullptr;
  /// A non-core point's smallest core neighbour so far, as a caller id, or `no_core_neighbor`.
  std::uint32_t* min_core = nullptr;

  static constexpr std::uint32_t not_core = UINT32_MAX;
  static constexpr std::uint32_t no_core_neighbor = UINT32_MAX;

  EPSJOIN_HD explicit operator bool() const noexcept { return parent != nullptr; }
};

}  // namespace epsjoin::detail
