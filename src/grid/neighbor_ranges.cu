#include <cub/cub.cuh>

#include "base/cub_call.cuh"
#include "grid/neighbor_ranges.cuh"

namespace epsjoin::detail {

namespace {

constexpr unsigned block = 128;

__device__ std::uint32_t lower_bound(const std::uint64_t* ids, std::uint32_t n, std::uint64_t id) {
  std::uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// Walks the examined neighbour cells of query cell `c` and calls f(begin, end) for each maximal
/// run of them that is contiguous in the indexed point order.
template <class F>
__device__ void for_each_range(const grid::geometry& geo, std::uint64_t query_cell_id,
                               const std::uint64_t* ids, const std::uint32_t* begin,
                               std::uint32_t n_cells, grid::access_pattern pattern, F&& f) {
  std::uint32_t own[grid::max_indexed_dims];
  grid::coords_of(geo, query_cell_id, own);
  const grid::cell_box box = grid::neighbor_box(geo, own);
  grid::for_each_neighbor_row(geo, own, box, pattern, [&](const grid::neighbor_row& row) {
    const std::uint64_t first_id = row.center_id - ((row.mask & 1u) ? 1 : 0);
    std::uint32_t at = lower_bound(ids, n_cells, first_id);
    std::uint32_t run_begin = 0, run_end = 0;  // cell indices of the open run
    bool open = false;
    for (unsigned b = 0; b < 3; ++b) {
      const std::uint64_t id = row.center_id + b - 1;
      if (id < first_id) continue;
      const bool present = at < n_cells && ids[at] == id;
      const bool examined = (row.mask >> b) & 1u;
      if (present && examined) {
        if (!open) run_begin = at;
        run_end = at + 1;
        open = true;
      } else if (present && open) {
        // A non-empty cell the pattern skips lies between: its points must not join the range.
        // (An empty cell, examined or not, adds no points and keeps the run going.)
        f(begin[run_begin], begin[run_end]);
        open = false;
      }
      if (present) ++at;
    }
    if (open) f(begin[run_begin], begin[run_end]);
  });
}

__global__ void count_ranges_kernel(grid::geometry geo, const std::uint64_t* query_ids,
                                    const std::uint32_t* query_begin, std::uint32_t n_query_cells,
                                    const std::uint64_t* ids, const std::uint32_t* begin,
                                    std::uint32_t n_cells, grid::access_pattern pattern,
                                    bool halving_self, std::uint32_t* counts,
                                    unsigned long long* candidates) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_query_cells) return;
  const std::uint64_t q_points = query_begin[c + 1] - query_begin[c];
  std::uint32_t n = 0;
  unsigned long long points = 0;
  for_each_range(geo, query_ids[c], ids, begin, n_cells, pattern,
                 [&](std::uint32_t b, std::uint32_t e) {
                   ++n;
                   points += e - b;
                 });
  counts[c] = n;
  unsigned long long work = q_points * points;
  if (halving_self) work += q_points * (q_points - 1) / 2;
  candidates[c] = work;
}

__global__ void fill_ranges_kernel(grid::geometry geo, const std::uint64_t* query_ids,
                                   std::uint32_t n_query_cells, const std::uint64_t* ids,
                                   const std::uint32_t* begin, std::uint32_t n_cells,
                                   grid::access_pattern pattern, const std::uint32_t* offsets,
                                   point_range* ranges) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_query_cells) return;
  std::uint32_t at = offsets[c];
  for_each_range(geo, query_ids[c], ids, begin, n_cells, pattern,
                 [&](std::uint32_t b, std::uint32_t e) { ranges[at++] = {b, e}; });
}

}  // namespace

template <class T>
neighbor_ranges find_neighbor_ranges(gpu_state& gpu, cudaStream_t stream,
                                     const grid::device_index<T>& queries,
                                     const grid::device_index<T>& indexed,
                                     grid::access_pattern pattern, bool self_join) {
  neighbor_ranges out;
  const std::uint32_t nq = queries.n_cells;
  out.offsets.reserve(nq + 1);
  if (nq == 0) {
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(out.offsets.data(), 0, sizeof(std::uint32_t), stream));
    return out;
  }
  const bool halving_self = self_join && pattern != grid::access_pattern::full;
  device_buffer<std::uint32_t> counts(nq + 1);
  device_buffer<unsigned long long> work(nq), total(1);
  count_ranges_kernel<<<grid_size(nq, block), block, 0, stream>>>(
      indexed.geo, queries.cell_ids.data(), queries.cell_begin.data(), nq, indexed.cell_ids.data(),
      indexed.cell_begin.data(), indexed.n_cells, pattern, halving_self, counts.data(), work.data());
  EPSJOIN_CHECK_LAUNCH();
  cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, counts.data(), out.offsets.data(), nq + 1,
                                         stream);
  });
  cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceReduce::Sum(temp, bytes, work.data(), total.data(), nq, stream);
  });
  std::uint32_t n_ranges = 0;
  unsigned long long candidates = 0;
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&n_ranges, out.offsets.data() + nq, sizeof n_ranges,
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&candidates, total.data(), sizeof candidates,
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  out.candidates = candidates;
  out.ranges.reserve(std::max<std::uint32_t>(n_ranges, 1));
  fill_ranges_kernel<<<grid_size(nq, block), block, 0, stream>>>(
      indexed.geo, queries.cell_ids.data(), nq, indexed.cell_ids.data(), indexed.cell_begin.data(),
      indexed.n_cells, pattern, out.offsets.data(), out.ranges.data());
  EPSJOIN_CHECK_LAUNCH();
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

template neighbor_ranges find_neighbor_ranges<double>(gpu_state&, cudaStream_t,
                                                      const grid::device_index<double>&,
                                                      const grid::device_index<double>&,
                                                      grid::access_pattern, bool);
template neighbor_ranges find_neighbor_ranges<float>(gpu_state&, cudaStream_t,
                                                     const grid::device_index<float>&,
                                                     const grid::device_index<float>&,
                                                     grid::access_pattern, bool);

}  // namespace epsjoin::detail
