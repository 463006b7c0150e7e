#include <cub/cub.cuh>

#include "base/cub_call.cuh"
#include "base/expects.hpp"
#include "base/upload.cuh"
#include "grid/device_index.cuh"
#include "grid/device_index.hpp"

namespace epsjoin::detail::grid {

namespace {

using detail::device_buffer;
using detail::grid_size;

constexpr unsigned block = 256;

template <class In>
__global__ void cell_ids_kernel(geometry geo, const In* rows, std::uint32_t n, int d,
                                std::uint64_t* ids, std::uint32_t* order) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ids[i] = point_cell_id(geo, rows + static_cast<std::size_t>(i) * d);
  order[i] = i;
}

template <class In, class T>
__global__ void gather_kernel(const In* rows, const std::uint32_t* permutation, std::uint32_t n,
                              int d, const int* dim_order, T* points) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= static_cast<std::size_t>(n) * d) return;
  const std::size_t pos = k / d;
  const int c = static_cast<int>(k % d);
  points[k] = static_cast<T>(rows[static_cast<std::size_t>(permutation[pos]) * d + dim_order[c]]);
}

__global__ void cell_of_kernel(const std::uint32_t* cell_begin, std::uint32_t n_cells,
                               std::uint32_t* cell_of) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_cells) return;
  for (std::uint32_t p = cell_begin[c]; p < cell_begin[c + 1]; ++p) cell_of[p] = c;
}

__global__ void coordinate_kernel(geometry geo, const std::uint64_t* cell_ids,
                                  std::uint32_t n_cells, int j, std::uint32_t* coords) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_cells) return;
  std::uint32_t all[max_indexed_dims];
  coords_of(geo, cell_ids[c], all);
  coords[c] = all[j];
}

int key_bits(std::uint64_t max_key) {
  int bits = 1;
  while (bits < 64 && (max_key >> bits) != 0) ++bits;
  return bits;
}

template <class In, class T>
device_index<T> build(detail::gpu_state& gpu, cudaStream_t stream, dataset_view data,
                      const geometry& geo, std::span<const int> dim_order, bool with_masks) {
  EPSJOIN_EXPECTS(dim_order.size() == data.d, "dim_order has ", dim_order.size(),
                  " columns for points of dimension ", data.d);
  device_index<T> index;
  index.geo = geo;
  index.d = static_cast<int>(data.d);
  const auto n = static_cast<std::uint32_t>(data.n);
  const int d = index.d;
  if (n == 0) {
    index.cell_begin.reserve(1);
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(index.cell_begin.data(), 0, sizeof(std::uint32_t), stream));
    index.masks.resize(geo.k);
    index.mask_sizes.assign(geo.k, 0);
    return index;
  }

  // Points in device memory are read where they lie; host points are uploaded first.
  device_buffer<In> uploaded;
  const In* rows = static_cast<const In*>(data.data);
  if (!data.on_device()) {
    uploaded.reserve(static_cast<std::size_t>(n) * d);
    detail::upload_to_device(gpu, uploaded.data(), data.data, sizeof(In) * n * d, stream);
    rows = uploaded.data();
    index.uploaded_point_bytes = sizeof(In) * n * d;
  }
  device_buffer<int> columns(d);
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(columns.data(), dim_order.data(), sizeof(int) * d,
                                   cudaMemcpyHostToDevice, stream));

  // Ids (with total_cells marking points outside the grid), then a stable radix sort by id:
  // within a cell, points keep input order, exactly as the host build's stable sort.
  device_buffer<std::uint64_t> ids(n), sorted_ids(n);
  device_buffer<std::uint32_t> order(n);
  index.permutation.reserve(n);
  cell_ids_kernel<<<grid_size(n, block), block, 0, stream>>>(
      geo, rows, n, d, ids.data(), order.data());
  EPSJOIN_CHECK_LAUNCH();
  const int bits = key_bits(geo.total_cells);
  detail::cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, ids.data(), sorted_ids.data(), order.data(),
                                           index.permutation.data(), n, 0, bits, stream);
  });

  // Runs of equal ids are the non-empty cells; the last run is the outside marker, if any.
  device_buffer<std::uint32_t> run_lengths(n + 1);  // + 1: the scan below reads one past
  device_buffer<std::uint32_t> run_count(1);
  index.cell_ids.reserve(n);
  detail::cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRunLengthEncode::Encode(temp, bytes, sorted_ids.data(), index.cell_ids.data(),
                                              run_lengths.data(), run_count.data(), n, stream);
  });
  std::uint32_t runs = 0;
  std::uint64_t last_id = 0;
  EPSJOIN_CUDA_TRY(
      cudaMemcpyAsync(&runs, run_count.data(), sizeof runs, cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  EPSJOIN_CUDA_TRY(cudaMemcpy(&last_id, index.cell_ids.data() + (runs - 1), sizeof last_id,
                              cudaMemcpyDeviceToHost));
  index.n_cells = runs;
  if (last_id == geo.total_cells) {
    --index.n_cells;
    std::uint32_t outside = 0;
    EPSJOIN_CUDA_TRY(cudaMemcpy(&outside, run_lengths.data() + index.n_cells, sizeof outside,
                                cudaMemcpyDeviceToHost));
    index.outside = outside;
  }
  index.n_points = n - index.outside;

  // An exclusive scan over n_cells + 1 lengths ends with their total, n_points, in the last
  // slot (the last input, the outside run or spare room, is never added).
  index.cell_begin.reserve(index.n_cells + 1);
  detail::cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, run_lengths.data(), index.cell_begin.data(),
                                         index.n_cells + 1, stream);
  });

  index.cell_of.reserve(std::max<std::uint32_t>(index.n_points, 1));
  if (index.n_cells > 0) {
    cell_of_kernel<<<grid_size(index.n_cells, block), block, 0, stream>>>(
        index.cell_begin.data(), index.n_cells, index.cell_of.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  index.points.reserve(std::max<std::size_t>(static_cast<std::size_t>(index.n_points) * d, 1));
  if (index.n_points > 0) {
    gather_kernel<<<grid_size(static_cast<std::size_t>(index.n_points) * d, block), block, 0,
                    stream>>>(rows, index.permutation.data(),
                              index.n_points, d, columns.data(), index.points.data());
    EPSJOIN_CHECK_LAUNCH();
  }

  index.masks.resize(geo.k);
  index.mask_sizes.assign(geo.k, 0);
  if (with_masks && index.n_cells > 0) {
    device_buffer<std::uint32_t> coords(index.n_cells), sorted(index.n_cells);
    for (int j = 0; j < geo.k; ++j) {
      coordinate_kernel<<<grid_size(index.n_cells, block), block, 0, stream>>>(
          geo, index.cell_ids.data(), index.n_cells, j, coords.data());
      EPSJOIN_CHECK_LAUNCH();
      detail::cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortKeys(temp, bytes, coords.data(), sorted.data(),
                                              index.n_cells, 0, 32, stream);
      });
      index.masks[j].reserve(index.n_cells);
      detail::cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
        return cub::DeviceSelect::Unique(temp, bytes, sorted.data(), index.masks[j].data(),
                                         run_count.data(), index.n_cells, stream);
      });
      EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&index.mask_sizes[j], run_count.data(),
                                       sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
    }
  }
  // The temporaries above are freed on return; their work must be done first.
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return index;
}

}  // namespace

template <class T>
device_index<T> build_device_index(detail::gpu_state& gpu, cudaStream_t stream, dataset_view data,
                                   const geometry& geo, std::span<const int> dim_order,
                                   bool with_masks) {
  return data.type == scalar_type::f64
             ? build<double, T>(gpu, stream, data, geo, dim_order, with_masks)
             : build<float, T>(gpu, stream, data, geo, dim_order, with_masks);
}

template device_index<double> build_device_index<double>(detail::gpu_state&, cudaStream_t,
                                                         dataset_view, const geometry&,
                                                         std::span<const int>, bool);
template device_index<float> build_device_index<float>(detail::gpu_state&, cudaStream_t,
                                                       dataset_view, const geometry&,
                                                       std::span<const int>, bool);

namespace {

template <class V>
std::vector<V> download(const detail::device_buffer<V>& buffer, std::size_t n) {
  std::vector<V> out;
  detail::copy_to_host(out, buffer.data(), n, nullptr);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(nullptr));
  return out;
}

}  // namespace

device_index_snapshot snapshot_device_index(resources& res, dataset_view data, const geometry& geo,
                                            std::span<const int> dim_order) {
  detail::gpu_state& gpu = detail::acquire_gpu(res);
  cudaStream_t stream = gpu.slots[0]->stream.get();
  const device_index<double> index =
      build_device_index<double>(gpu, stream, data, geo, dim_order, true);
  device_index_snapshot s;
  s.cell_ids = download(index.cell_ids, index.n_cells);
  s.cell_begin = download(index.cell_begin, index.n_cells + 1);
  s.permutation = download(index.permutation, index.n_points);
  s.points = download(index.points, static_cast<std::size_t>(index.n_points) * index.d);
  for (int j = 0; j < geo.k; ++j) s.masks.push_back(download(index.masks[j], index.mask_sizes[j]));
  s.outside = index.outside;
  return s;
}

}  // namespace epsjoin::detail::grid
