#pragma once
// assign_points (epsjoin/partition.hpp) writing each box's members into arrays the caller
// provides, so a caller that wants a box's own points and its halo in one array (the multi-device
// join) gets them there directly, without zero-filled vectors and a copy.

#include <cstdint>
#include <functional>

#include "epsjoin/partition.hpp"

namespace epsjoin::detail {

struct member_arrays {
  std::uint32_t* own = nullptr;   ///< room for the box's `own` ids
  std::uint32_t* halo = nullptr;  ///< room for its `halo` ids
};

/// Counts each box's members, asks `place(box, own, halo)` where they go, and writes them there
/// in ascending order, on `threads` threads.
void assign_points_to(
    const box_partition& partition, dataset_view points, unsigned threads,
    const std::function<member_arrays(std::size_t box, std::uint64_t own, std::uint64_t halo)>& place);

}  // namespace epsjoin::detail
