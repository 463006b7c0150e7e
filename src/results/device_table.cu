// The device side of the table assembler (epsjoin/device_table.hpp): a device table's distances,
// sorted rows and pairs, made where the table lies. Entries are spread over threads one each,
// and a thread finds its entry's row by a binary search of the offsets: rows of any length,
// one or thousands of entries, cost alike, and the searches' upper levels stay in cache.

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

#include "base/cub_call.cuh"
#include "base/cuda_check.cuh"
#include "base/expects.hpp"
#include "base/gpu_state.cuh"
#include "base/memory.cuh"
#include "base/memory_budget.hpp"
#include "epsjoin/device_table.hpp"
#include "epsjoin/error.hpp"

namespace epsjoin {

namespace {

using detail::concat;
using detail::device_buffer;
using detail::gpu_state;
using detail::grid_size;
using detail::stream_scratch;

constexpr unsigned block = 256;
// Enough blocks to fill the largest GPUs; the kernels stride over the rest.
constexpr std::uint64_t max_blocks = 1u << 16;

unsigned blocks_for(std::uint64_t entries) {
  return grid_size(std::min<std::uint64_t>(entries, max_blocks * block), block);
}

/// The row holding entry k: the last r with offsets[r] <= k (empty rows share their start with
/// the next row, so the last such row is the one the entry is in).
__device__ std::uint64_t row_of(const std::uint64_t* __restrict__ offsets, std::uint64_t rows,
                                std::uint64_t k) {
  std::uint64_t low = 0, high = rows - 1;
  while (low < high) {
    const std::uint64_t mid = low + (high - low + 1) / 2;
    if (offsets[mid] <= k) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return low;
}

// The host's reported_distance (base/within_eps.hpp), rounding step by step: no fused
// multiply-add, which the compiler would otherwise form and which changes the last bit.
template <class T>
__global__ void distances_kernel(const std::uint64_t* __restrict__ offsets, std::uint64_t rows,
                                 const std::uint32_t* __restrict__ neighbors,
                                 std::uint64_t entries, const T* __restrict__ queries,
                                 const T* __restrict__ data, std::uint32_t d,
                                 double* __restrict__ out) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t k = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < entries;
       k += stride) {
    const T* x = queries + row_of(offsets, rows, k) * d;
    const T* y = data + std::uint64_t{neighbors[k]} * d;
    double sum = 0;
    for (std::uint32_t j = 0; j < d; ++j) {
      const double delta = __dsub_rn(static_cast<double>(x[j]), static_cast<double>(y[j]));
      sum = __dadd_rn(sum, __dmul_rn(delta, delta));
    }
    out[k] = __dsqrt_rn(sum);
  }
}

struct index_pair64 {
  std::int64_t query;
  std::int64_t neighbor;
};
static_assert(sizeof(index_pair64) == 2 * sizeof(std::int64_t));

/// Entry k as its (query, neighbour) pair.
struct entry_pair {
  const std::uint64_t* offsets;
  std::uint64_t rows;
  const std::uint32_t* neighbors;
  __device__ index_pair64 operator()(std::uint64_t k) const {
    return {static_cast<std::int64_t>(row_of(offsets, rows, k)),
            static_cast<std::int64_t>(neighbors[k])};
  }
};

struct pair_kept {
  pair_selection which;
  __device__ bool operator()(const index_pair64& p) const {
    switch (which) {
      case pair_selection::neighbor_above: return p.neighbor > p.query;
      case pair_selection::neighbor_not_below: return p.neighbor >= p.query;
      default: return true;
    }
  }
};

struct kept_count {
  entry_pair pair;
  pair_kept kept;
  __device__ std::uint64_t operator()(std::uint64_t k) const { return kept(pair(k)) ? 1 : 0; }
};

/// The GPU state of `res`, on the table's device.
gpu_state& state_for(resources& res, const device_csr& table, const char* what) {
  if (res.device() != table.device) {
    throw invalid_argument(concat(what, ": the table lies on device ", table.device,
                                  ", the resources are device ", res.device(), "'s"));
  }
  return detail::acquire_gpu(res);
}

std::uint64_t table_bytes(const device_csr& table) {
  return sizeof(std::uint64_t) * (table.n_queries + 1) + sizeof(std::uint32_t) * table.n_pairs;
}

/// Throws out_of_memory unless `bytes` more fit the device budget of `res` beside the table.
void require_device(const resources& res, const device_csr& table, std::uint64_t bytes,
                    const char* what) {
  std::size_t free = 0, total = 0;
  EPSJOIN_CUDA_TRY(cudaMemGetInfo(&free, &total));
  memory_limits limits = res.memory();
  // The table is the join's result and counts against a limit the caller set.
  if (limits.device_bytes > 0) {
    limits.device_bytes = limits.device_bytes > table_bytes(table)
                              ? limits.device_bytes - table_bytes(table)
                              : 1;
  }
  const std::uint64_t available = detail::memory_budget(limits, {}).device_bytes(free);
  if (bytes > available) {
    throw out_of_memory(concat(what, " needs ", bytes, " bytes of device memory beside the table; ",
                               available, " are within the device budget (",
                               res.memory().device_bytes > 0 ? "the device memory limit"
                                                             : "what the device has free",
                               ", less a headroom). Raise the device memory limit, or take the "
                               "table to the host"));
  }
}

void check_points(const device_csr& table, dataset_view points, std::size_t rows,
                  const char* which) {
  if (rows == 0) return;
  EPSJOIN_ENSURE(points.on_device() && points.device == table.device && points.n == rows &&
                     points.data != nullptr,
                 invalid_argument, "device_distances: the ", which, " are ", points.n,
                 " points in ", points.on_device() ? "device" : "host", " memory; the table has ",
                 rows, " rows on device ", table.device);
}

}  // namespace

device_array<double> device_distances(resources& res, const device_csr& table,
                                      dataset_view queries, dataset_view data) {
  gpu_state& gpu = state_for(res, table, "device_distances");
  check_points(table, queries, table.n_queries, "queries");
  EPSJOIN_ENSURE(data.on_device() && data.device == table.device && data.type == queries.type &&
                     data.d == queries.d,
                 invalid_argument, "device_distances: the data points must lie on device ",
                 table.device, " with the queries' dtype and ", queries.d, " dimensions");
  require_device(res, table, sizeof(double) * table.n_pairs, "device_distances");
  auto values = std::make_shared<device_buffer<double>>(std::max<std::uint64_t>(table.n_pairs, 1));
  device_array<double> out{values->data(), table.n_pairs, table.device, values};
  if (table.n_pairs == 0) return out;
  cudaStream_t stream = gpu.slots[0]->stream.get();
  const auto d = static_cast<std::uint32_t>(queries.d);
  if (queries.type == scalar_type::f64) {
    distances_kernel<<<blocks_for(table.n_pairs), block, 0, stream>>>(
        table.offsets, table.n_queries, table.neighbors, table.n_pairs,
        static_cast<const double*>(queries.data), static_cast<const double*>(data.data), d,
        out.data);
  } else {
    distances_kernel<<<blocks_for(table.n_pairs), block, 0, stream>>>(
        table.offsets, table.n_queries, table.neighbors, table.n_pairs,
        static_cast<const float*>(queries.data), static_cast<const float*>(data.data), d,
        out.data);
  }
  EPSJOIN_CHECK_LAUNCH();
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

void sort_device_rows(resources& res, const device_csr& table, device_array<double>* distances) {
  gpu_state& gpu = state_for(res, table, "sort_device_rows");
  EPSJOIN_ENSURE(distances == nullptr ||
                     (distances->size == table.n_pairs && distances->device == table.device),
                 invalid_argument, "sort_device_rows: ", distances ? distances->size : 0,
                 " distances for a table of ", table.n_pairs, " entries");
  if (table.n_pairs == 0 || table.n_queries == 0) return;
  cudaStream_t stream = gpu.slots[0]->stream.get();
  const auto items = static_cast<std::int64_t>(table.n_pairs);
  const auto segments = static_cast<std::int64_t>(table.n_queries);
  const std::uint64_t* begins = table.offsets;
  const std::uint64_t* ends = table.offsets + 1;
  // The sort alternates between the table's arrays and a second set; whichever ends current is
  // copied back if it is not the table's.
  const bool with_values = distances != nullptr;
  std::size_t temp_bytes = 0;
  cub::DoubleBuffer<std::uint32_t> keys(table.neighbors, nullptr);
  cub::DoubleBuffer<double> values(with_values ? distances->data : nullptr, nullptr);
  auto sort = [&](void* temp, std::size_t& bytes) {
    return with_values ? cub::DeviceSegmentedSort::SortPairs(temp, bytes, keys, values, items,
                                                            segments, begins, ends, stream)
                       : cub::DeviceSegmentedSort::SortKeys(temp, bytes, keys, items, segments,
                                                           begins, ends, stream);
  };
  EPSJOIN_CUDA_TRY(sort(nullptr, temp_bytes));
  const std::uint64_t value_bytes = with_values ? sizeof(double) * table.n_pairs : 0;
  require_device(res, table, sizeof(std::uint32_t) * table.n_pairs + value_bytes + temp_bytes,
                 "sort_device_rows");
  stream_scratch<std::uint32_t> other_keys(table.n_pairs, stream);
  stream_scratch<double> other_values(with_values ? table.n_pairs : 0, stream);
  stream_scratch<unsigned char> temp(temp_bytes, stream);
  keys = cub::DoubleBuffer<std::uint32_t>(table.neighbors, other_keys.data());
  values = cub::DoubleBuffer<double>(with_values ? distances->data : nullptr, other_values.data());
  EPSJOIN_CUDA_TRY(sort(temp.data(), temp_bytes));
  if (keys.Current() != table.neighbors) {
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(table.neighbors, keys.Current(),
                                     sizeof(std::uint32_t) * table.n_pairs,
                                     cudaMemcpyDeviceToDevice, stream));
  }
  if (with_values && values.Current() != distances->data) {
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(distances->data, values.Current(), value_bytes,
                                     cudaMemcpyDeviceToDevice, stream));
  }
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
}

device_array<std::int64_t> device_pairs(resources& res, const device_csr& table,
                                        pair_selection which) {
  gpu_state& gpu = state_for(res, table, "device_pairs");
  cudaStream_t stream = gpu.slots[0]->stream.get();
  const entry_pair pair{table.offsets, table.n_queries, table.neighbors};
  const pair_kept kept{which};
  const auto entries = thrust::make_counting_iterator<std::uint64_t>(0);
  const auto items = static_cast<std::int64_t>(table.n_pairs);

  // How many are kept, so the result is allocated to size.
  std::uint64_t n = table.n_pairs;
  if (which != pair_selection::every_entry && items > 0) {
    stream_scratch<std::uint64_t> counted(1, stream);
    std::uint64_t* total = counted.data();
    const auto flags = thrust::make_transform_iterator(entries, kept_count{pair, kept});
    detail::cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceReduce::Sum(temp, bytes, flags, total, items, stream);
    });
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&n, total, sizeof n, cudaMemcpyDeviceToHost, stream));
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  require_device(res, table, sizeof(index_pair64) * n, "device_pairs");
  auto storage = std::make_shared<device_buffer<index_pair64>>(std::max<std::uint64_t>(n, 1));
  device_array<std::int64_t> out{reinterpret_cast<std::int64_t*>(storage->data()), 2 * n,
                                 table.device, storage};
  if (n == 0) return out;
  stream_scratch<std::uint64_t> selected(1, stream);
  const auto pairs = thrust::make_transform_iterator(entries, pair);
  detail::cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceSelect::If(temp, bytes, pairs, storage->data(), selected.data(), items,
                                 kept, stream);
  });
  std::uint64_t written = 0;
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&written, selected.data(), sizeof written,
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  EPSJOIN_ENSURE(written == n, error, "internal: device_pairs selected ", written, " pairs of ",
                 n, " counted");
  return out;
}

}  // namespace epsjoin
