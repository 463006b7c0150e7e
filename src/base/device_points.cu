// Points and tables in device memory, for dispatch (base/cuda_part.hpp): the checks a host
// view gets on the host run here on the device, and a host table goes over for a device sink.

#include <algorithm>
#include <cmath>
#include <memory>

#include "base/cub_call.cuh"
#include "base/cuda_part.hpp"
#include "base/gpu_state.cuh"

namespace epsjoin::detail {

namespace {

constexpr unsigned block = 256;

/// The smallest flat index of a value that is not finite (stays at `none` when all are).
template <class T>
__global__ void first_non_finite_kernel(const T* __restrict__ values, std::size_t count,
                                        unsigned long long* __restrict__ first) {
  for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (!isfinite(static_cast<double>(values[k]))) {
      atomicMin(first, static_cast<unsigned long long>(k));
      return;
    }
  }
}

struct device_table_storage {
  device_buffer<std::uint64_t> offsets;
  device_buffer<std::uint32_t> neighbors;
};

}  // namespace

void check_device_points(resources& res, dataset_view v, const char* what) {
  cudaPointerAttributes attributes{};
  EPSJOIN_CUDA_TRY(cudaPointerGetAttributes(&attributes, v.data));
  const bool device_memory =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  EPSJOIN_EXPECTS(device_memory, what, " is marked as device memory but its pointer is not memory "
                  "of a CUDA device");
  EPSJOIN_EXPECTS(attributes.device == res.device(), what, " lies on CUDA device ",
                  attributes.device, " but the join runs on device ", res.device());
  gpu_state& gpu = acquire_gpu(res);
  cudaStream_t stream = gpu.slots[0]->stream.get();
  const std::size_t count = v.n * v.d;
  constexpr unsigned long long none = ~0ull;  // all bytes 0xff
  device_buffer<unsigned long long> first(1);
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(first.data(), 0xff, sizeof none, stream));
  const unsigned blocks = static_cast<unsigned>(
      std::min<std::size_t>(grid_size(count, block), std::size_t{8} * 1024));
  if (v.type == scalar_type::f64) {
    first_non_finite_kernel<<<blocks, block, 0, stream>>>(static_cast<const double*>(v.data), count,
                                                          first.data());
  } else {
    first_non_finite_kernel<<<blocks, block, 0, stream>>>(static_cast<const float*>(v.data), count,
                                                          first.data());
  }
  EPSJOIN_CHECK_LAUNCH();
  unsigned long long bad = none;
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&bad, first.data(), sizeof bad, cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  if (bad == none) return;
  // The one bad value, for the message.
  double x = 0;
  if (v.type == scalar_type::f64) {
    EPSJOIN_CUDA_TRY(cudaMemcpy(&x, static_cast<const double*>(v.data) + bad, sizeof x,
                                cudaMemcpyDeviceToHost));
  } else {
    float f = 0;
    EPSJOIN_CUDA_TRY(cudaMemcpy(&f, static_cast<const float*>(v.data) + bad, sizeof f,
                                cudaMemcpyDeviceToHost));
    x = f;
  }
  throw invalid_argument(concat(what, ": point ", bad / v.d, ", dimension ", bad % v.d, " is ", x,
                                "; coordinates must be finite"));
}

device_csr upload_table(int device, const neighbor_table& table) {
  // Synchronous copies on the device's default stream: the table is whole and the join is over.
  EPSJOIN_CUDA_TRY(cudaSetDevice(device));
  auto storage = std::make_shared<device_table_storage>();
  storage->offsets.reserve(std::max<std::size_t>(table.offsets.size(), 1));
  storage->neighbors.reserve(std::max<std::size_t>(table.neighbors.size(), 1));
  EPSJOIN_CUDA_TRY(cudaMemcpy(storage->offsets.data(), table.offsets.data(),
                              sizeof(std::uint64_t) * table.offsets.size(),
                              cudaMemcpyHostToDevice));
  EPSJOIN_CUDA_TRY(cudaMemcpy(storage->neighbors.data(), table.neighbors.data(),
                              sizeof(std::uint32_t) * table.neighbors.size(),
                              cudaMemcpyHostToDevice));
  device_csr out;
  out.offsets = storage->offsets.data();
  out.neighbors = storage->neighbors.data();
  out.n_queries = table.n_queries();
  out.n_pairs = table.n_pairs();
  out.device = device;
  out.owner = std::move(storage);
  return out;
}

}  // namespace epsjoin::detail
