#pragma once
// The eps-grid index on the GPU, built with CUB from the same geometry code as the host index
// (grid/host_index.hpp) and holding the same arrays: non-empty cells sorted by linear id, their
// point ranges, the cell-ordered permutation and point copy, and the per-dimension masks.

#include <cstdint>
#include <span>
#include <vector>

#include "base/gpu_state.cuh"
#include "base/memory.cuh"
#include "epsjoin/dataset.hpp"
#include "grid/geometry.hpp"

namespace epsjoin::detail::grid {

template <class T>
struct device_index {
  geometry geo;
  int d = 0;
  std::uint32_t n_points = 0;  ///< points inside the grid (positions 0 .. n_points - 1)
  std::uint32_t n_cells = 0;
  std::uint32_t outside = 0;   ///< query points outside the grid (A x B joins), not indexed
  detail::device_buffer<std::uint64_t> cell_ids;     ///< B [n_cells]
  detail::device_buffer<std::uint32_t> cell_begin;   ///< G [n_cells + 1]
  detail::device_buffer<std::uint32_t> permutation;  ///< A [n_points] position -> input id
  detail::device_buffer<std::uint32_t> cell_of;      ///< [n_points] position -> cell index
  detail::device_buffer<T> points;                   ///< [n_points x d] cell order, dim_order
  std::vector<detail::device_buffer<std::uint32_t>> masks;  ///< M, sorted coordinates per dim
  std::vector<std::uint32_t> mask_sizes;
  std::uint64_t uploaded_point_bytes = 0;  ///< host points copied in (0 for device points)
};

/// Builds the index of `data` (host or device memory, input column order) for `geo` on `stream`;
/// `dim_order` (all d columns) is the column order of the point copy. Points outside the grid
/// (possible only when `geo` was planned for another set) are counted and left out.
template <class T>
device_index<T> build_device_index(detail::gpu_state& gpu, cudaStream_t stream, dataset_view data,
                                   const geometry& geo, std::span<const int> dim_order,
                                   bool with_masks);

}  // namespace epsjoin::detail::grid
