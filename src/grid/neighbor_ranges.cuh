#pragma once
// Per query cell, the point ranges of the indexed cells it must compare with. Neighbour cells of
// one row (offsets -1, 0, +1 in the last indexed dimension) have consecutive ids, so the
// non-empty ones are consecutive in the sorted cell array and their points are one contiguous
// range: a cell's whole neighbourhood is at most 2 * 3^(k-1) ranges. Finding them costs one
// binary search per row, paid once per cell instead of once per query point.

#include <cstdint>

#include "grid/device_index.cuh"

namespace epsjoin::detail {

struct point_range {
  std::uint32_t begin, end;
};

struct neighbor_ranges {
  device_buffer<std::uint32_t> offsets;  ///< [query cells + 1] into `ranges`
  device_buffer<point_range> ranges;
  std::uint64_t candidates = 0;          ///< distances the join will compute
};

/// Ranges of `indexed` cells that the cells of `queries` examine under `pattern`. For a
/// self-join pass the same index twice: the own cell is then left to the kernel under the
/// halving patterns (it pairs the points of a cell with each other itself).
template <class T>
neighbor_ranges find_neighbor_ranges(gpu_state& gpu, cudaStream_t stream,
                                     const grid::device_index<T>& queries,
                                     const grid::device_index<T>& indexed,
                                     grid::access_pattern pattern, bool self_join);

}  // namespace epsjoin::detail
