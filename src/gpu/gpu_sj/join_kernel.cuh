#pragma once
// GPU-SJ's kernel (paper 001 sec. 4): one thread per query point, comparing it with the points
// of its cell's neighbour ranges; under the halving patterns a self-join also pairs the query
// with the later points of its own cell and emits each pair in both directions.

#include "base/emit.cuh"
#include "grid/neighbor_ranges.cuh"
#include "model/batches.hpp"

namespace epsjoin::detail {

template <class T>
struct grid_join_view {
  const T* query_points;              // [nq x d] query index order
  const std::uint32_t* query_ids;     // position -> caller's id
  const std::uint32_t* query_cell;    // position -> query cell
  const std::uint32_t* query_cell_begin;
  const T* data_points;               // [n x d] indexed order
  const std::uint32_t* data_ids;
  const std::uint32_t* range_offsets;
  const point_range* ranges;
  int d;
  T eps2;
  bool self_join;
  bool halving;  // self-join under unicomp or lid-unicomp
};

template <class T, emit_mode Mode>
__global__ void __launch_bounds__(256) gpu_sj_kernel(grid_join_view<T> v, strided_batch batch,
                                                     result_target out) {
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= batch.count) return;
  const auto pos = static_cast<std::uint32_t>(batch.first + t * batch.stride);
  const T* q = v.query_points + static_cast<std::size_t>(pos) * v.d;
  const std::uint32_t query = v.query_ids[pos];
  const std::uint32_t cell = v.query_cell[pos];
  for (std::uint32_t r = v.range_offsets[cell]; r < v.range_offsets[cell + 1]; ++r) {
    const point_range range = v.ranges[r];
    for (std::uint32_t j = range.begin; j < range.end; ++j) {
      if (v.self_join && j == pos) continue;
      if (within(q, v.data_points + static_cast<std::size_t>(j) * v.d, v.d, v.eps2)) {
        emit<Mode>(out, query, v.data_ids[j], v.halving);
      }
    }
  }
  if (v.halving) {
    const std::uint32_t end = v.query_cell_begin[cell + 1];
    for (std::uint32_t j = pos + 1; j < end; ++j) {
      if (within(q, v.data_points + static_cast<std::size_t>(j) * v.d, v.d, v.eps2)) {
        emit<Mode>(out, query, v.data_ids[j], true);
      }
    }
  }
}

}  // namespace epsjoin::detail
