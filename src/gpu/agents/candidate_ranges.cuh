#pragma once
// The candidates of a work item's cell, as the row pipeline lays them out (join_view::ranges):
// its neighbour ranges, then, in a halving self-join, the rest of its own cell. Every indexed
// kernel walks them the same way.

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"
#include "grid/neighbor_ranges.cuh"

namespace epsjoin::detail::agents {

/// The r-th candidate range of a query cell: its neighbour ranges, then (halving self-join) its
/// own cell from position `own_first` on.
template <class T, bool Halving>
__device__ __forceinline__ point_range candidate_range(const row_join::join_view<T>& v,
                                                       std::uint32_t cell, std::uint32_t r,
                                                       std::uint32_t own_first) {
  const std::uint32_t r_begin = v.range_offsets[cell];
  if (Halving && r == v.range_offsets[cell + 1] - r_begin) {
    return {own_first, v.query_cell_begin[cell + 1]};
  }
  return v.ranges[r_begin + r];
}

/// How many candidate ranges candidate_range enumerates for a query cell.
template <class T, bool Halving>
__device__ __forceinline__ std::uint32_t candidate_ranges(const row_join::join_view<T>& v,
                                                          std::uint32_t cell) {
  return v.range_offsets[cell + 1] - v.range_offsets[cell] + (Halving ? 1 : 0);
}

}  // namespace epsjoin::detail::agents
