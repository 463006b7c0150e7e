#include <algorithm>

#include <cub/cub.cuh>

#include "base/cub_call.cuh"
#include "base/expects.hpp"
#include "gpu/row_join/work_items.cuh"

namespace epsjoin::detail::row_join {

namespace {

constexpr unsigned block = 256;

__global__ void items_per_cell_kernel(const std::uint32_t* cell_begin, std::uint32_t n_cells,
                                      unsigned chunk, std::uint32_t* counts) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_cells) return;
  counts[c] = (cell_begin[c + 1] - cell_begin[c] + chunk - 1) / chunk;
}

__global__ void fill_items_kernel(const std::uint32_t* cell_begin, std::uint32_t n_cells,
                                  unsigned chunk, const std::uint32_t* item_offsets,
                                  const std::uint32_t* range_offsets, const point_range* ranges,
                                  bool halving, unsigned lanes, work_item* items,
                                  std::uint32_t* workload) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_cells) return;
  std::uint64_t candidates = 0;
  for (std::uint32_t r = range_offsets[c]; r < range_offsets[c + 1]; ++r) {
    candidates += ranges[r].end - ranges[r].begin;
  }
  const std::uint32_t first = cell_begin[c], end = cell_begin[c + 1];
  if (halving) candidates += (end - first) / 2;
  std::uint32_t at = item_offsets[c];
  for (std::uint32_t p = first; p < end; p += chunk, ++at) {
    const std::uint32_t count = min(chunk, end - p);
    items[at] = {p, count, c};
    const unsigned k = lanes > 0 ? lanes : 32u >> (32 - __clz(count - 1));
    const std::uint64_t steps = (candidates + k - 1) / k;
    workload[at] = static_cast<std::uint32_t>(steps < 0xffffffffu ? steps : 0xffffffffu);
  }
}

__global__ void segment_keys_kernel(const work_item* items, const std::uint32_t* workload,
                                    std::uint32_t n, const std::uint32_t* segment_first,
                                    std::uint32_t n_segments, bool by_workload,
                                    std::uint64_t* keys) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // The segment holding the item: the last one starting at or before its first position.
  std::uint32_t lo = 0, hi = n_segments;
  while (hi - lo > 1) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (segment_first[mid] <= items[i].first) lo = mid;
    else hi = mid;
  }
  // Ascending sort: segment first, then heavier first (inverted workload), then position.
  const std::uint64_t weight = by_workload ? 0xffffffffu - workload[i] : 0;
  keys[i] = (static_cast<std::uint64_t>(lo) << 32) | weight;
}

__global__ void scatter_records_kernel(const index_pair* records, std::uint64_t n,
                                       const std::uint64_t* row_offset, std::uint64_t segment_begin,
                                       std::uint32_t* cursor, std::uint32_t* neighbors) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const index_pair r = records[i];
    const std::uint32_t slot = atomicAdd(cursor + r.query, 1u);
    neighbors[row_offset[r.query] - segment_begin + slot] = r.neighbor;
  }
}

__global__ void take_share_kernel(const work_item* items, std::uint32_t first, std::uint32_t step,
                                  std::uint32_t n_taken, work_item* taken) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n_taken) taken[k] = items[first + static_cast<std::uint64_t>(k) * step];
}

}  // namespace

device_buffer<work_item> take_share(const work_item* items, std::uint32_t n, std::uint32_t first,
                                    std::uint32_t step, std::uint32_t& n_taken,
                                    cudaStream_t stream) {
  EPSJOIN_EXPECTS(step > 0 && first < step, "internal: share ", first, " of ", step);
  n_taken = n > first ? (n - first + step - 1) / step : 0;
  device_buffer<work_item> taken(std::max<std::uint32_t>(n_taken, 1));
  if (n_taken == 0) return taken;
  take_share_kernel<<<grid_size(n_taken, block), block, 0, stream>>>(items, first, step, n_taken,
                                                                     taken.data());
  EPSJOIN_CHECK_LAUNCH();
  return taken;
}

void scatter_records(const index_pair* records, std::uint64_t n, const std::uint64_t* row_offset,
                     std::uint64_t segment_begin, std::uint32_t* cursor, std::uint32_t* neighbors,
                     cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>((n + block - 1) / block, 1u << 16));
  scatter_records_kernel<<<blocks, block, 0, stream>>>(records, n, row_offset, segment_begin, cursor,
                                                       neighbors);
  EPSJOIN_CHECK_LAUNCH();
}

work_list build_items(gpu_state& gpu, cudaStream_t stream, const std::uint32_t* cell_begin,
                      std::uint32_t n_cells, const neighbor_ranges& ranges, bool halving,
                      unsigned chunk, unsigned lanes) {
  work_list list;
  if (n_cells == 0) return list;
  device_buffer<std::uint32_t> counts(n_cells + 1), offsets(n_cells + 1);
  items_per_cell_kernel<<<grid_size(n_cells, block), block, 0, stream>>>(cell_begin, n_cells, chunk,
                                                                         counts.data());
  EPSJOIN_CHECK_LAUNCH();
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(counts.data() + n_cells, 0, sizeof(std::uint32_t), stream));
  cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, counts.data(), offsets.data(), n_cells + 1,
                                         stream);
  });
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&list.n, offsets.data() + n_cells, sizeof list.n,
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  list.items.reserve(std::max<std::uint32_t>(list.n, 1));
  list.workload.reserve(std::max<std::uint32_t>(list.n, 1));
  fill_items_kernel<<<grid_size(n_cells, block), block, 0, stream>>>(
      cell_begin, n_cells, chunk, offsets.data(), ranges.offsets.data(), ranges.ranges.data(),
      halving, lanes, list.items.data(), list.workload.data());
  EPSJOIN_CHECK_LAUNCH();
  std::vector<work_item> host(list.n);
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(host.data(), list.items.data(), sizeof(work_item) * list.n,
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  list.host_first.resize(list.n);
  for (std::uint32_t i = 0; i < list.n; ++i) list.host_first[i] = host[i].first;
  return list;
}

device_buffer<work_item> order_items(gpu_state& gpu, cudaStream_t stream, const work_list& list,
                                     std::span<const std::uint32_t> segment_first, bool by_workload) {
  device_buffer<work_item> sorted(std::max<std::uint32_t>(list.n, 1));
  if (list.n == 0) return sorted;
  EPSJOIN_EXPECTS(by_workload || segment_first.size() > 1,
                  "internal: order_items called for the order the list already has");
  std::vector<std::uint32_t> firsts(segment_first.begin(), segment_first.end());
  if (firsts.empty()) firsts.push_back(0);
  device_buffer<std::uint32_t> device_firsts(firsts.size());
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(device_firsts.data(), firsts.data(),
                                   sizeof(std::uint32_t) * firsts.size(), cudaMemcpyHostToDevice,
                                   stream));
  device_buffer<std::uint64_t> keys(list.n), sorted_keys(list.n);
  segment_keys_kernel<<<grid_size(list.n, block), block, 0, stream>>>(
      list.items.data(), list.workload.data(), list.n, device_firsts.data(),
      static_cast<std::uint32_t>(firsts.size()), by_workload, keys.data());
  EPSJOIN_CHECK_LAUNCH();
  int end_bit = 32;
  while ((std::uint64_t{1} << (end_bit - 32)) < firsts.size()) ++end_bit;
  cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, keys.data(), sorted_keys.data(),
                                           list.items.data(), sorted.data(),
                                           static_cast<int>(list.n), 0, end_bit, stream);
  });
  // `firsts` and `device_firsts` must outlive the kernel that reads them.
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return sorted;
}

}  // namespace epsjoin::detail::row_join
