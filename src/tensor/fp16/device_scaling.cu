// half_bound.hpp's scaling on the device (device_scaling.cuh). Blocks take fixed runs of rows;
// each writes its column sums to its own slot, and one thread per column adds the slots in
// order, so the centre does not depend on the schedule. The largest deviation is a maximum,
// order-free: a block's maximum goes through atomicMax on the bits of a non-negative double,
// which order like the doubles themselves.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/cub_call.cuh"
#include "base/gpu_state.cuh"
#include "base/memory.cuh"
#include "tensor/fp16/device_scaling.cuh"

namespace epsjoin::detail::fp16 {

namespace {

constexpr unsigned rows_per_block = 1024;
constexpr unsigned threads = 256;

/// partial[b * d + c]: the sum of column c over block b's rows.
template <class T>
__global__ void column_sums_kernel(const T* points, std::uint32_t n, int d, double* partial) {
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * rows_per_block;
  const std::uint64_t last = std::min<std::uint64_t>(first + rows_per_block, n);
  for (int c = threadIdx.x; c < d; c += blockDim.x) {
    double sum = 0;
    for (std::uint64_t r = first; r < last; ++r) sum += static_cast<double>(points[r * d + c]);
    partial[static_cast<std::size_t>(blockIdx.x) * d + c] = sum;
  }
}

/// center[c]: the sum of the blocks' partial sums of column c, in block order, over `n` points.
__global__ void center_kernel(const double* partial, unsigned blocks, int d, double n,
                              double* center) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= d) return;
  double sum = 0;
  for (unsigned b = 0; b < blocks; ++b) sum += partial[static_cast<std::size_t>(b) * d + c];
  center[c] = sum / n;
}

/// *largest = max(*largest, |p_k / 2 - center_k / 2|) over the block's rows (halved: the
/// difference of two finite doubles can overflow, its half cannot).
template <class T>
__global__ void spread_kernel(const T* points, std::uint32_t n, int d, const double* center,
                              unsigned long long* largest) {
  __shared__ double block_most[threads];
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * rows_per_block;
  const std::uint64_t last = std::min<std::uint64_t>(first + rows_per_block, n);
  const std::uint64_t elements = (last - first) * d;
  const T* rows = points + first * d;
  double most = 0;
  for (std::uint64_t e = threadIdx.x; e < elements; e += blockDim.x) {
    const double v = static_cast<double>(rows[e]);
    most = fmax(most, fabs(0.5 * v - 0.5 * center[e % d]));
  }
  block_most[threadIdx.x] = most;
  __syncthreads();
  for (unsigned half = threads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      block_most[threadIdx.x] = fmax(block_most[threadIdx.x], block_most[threadIdx.x + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicMax(largest, static_cast<unsigned long long>(__double_as_longlong(block_most[0])));
  }
}

unsigned blocks_for(std::uint32_t n) { return (n + rows_per_block - 1) / rows_per_block; }

}  // namespace

template <class T>
half_scaling device_half_scaling(const T* first, std::uint32_t n_first, const T* second,
                                 std::uint32_t n_second, int d, cudaStream_t stream) {
  half_scaling s;
  s.center.assign(static_cast<std::size_t>(d), 0.0);
  const std::uint64_t n = std::uint64_t{n_first} + n_second;
  if (n == 0 || d == 0) return s;
  const unsigned blocks_first = blocks_for(n_first), blocks_second = blocks_for(n_second);
  const unsigned blocks = blocks_first + blocks_second;
  stream_scratch<double> partial(static_cast<std::size_t>(blocks) * d + d, stream);
  stream_scratch<unsigned long long> largest(1, stream);
  double* const center = partial.data() + static_cast<std::size_t>(blocks) * d;
  if (blocks_first > 0) {
    column_sums_kernel<T><<<blocks_first, threads, 0, stream>>>(first, n_first, d, partial.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  if (blocks_second > 0) {
    column_sums_kernel<T><<<blocks_second, threads, 0, stream>>>(
        second, n_second, d, partial.data() + static_cast<std::size_t>(blocks_first) * d);
    EPSJOIN_CHECK_LAUNCH();
  }
  center_kernel<<<grid_size(d, threads), threads, 0, stream>>>(partial.data(), blocks, d,
                                                               static_cast<double>(n), center);
  EPSJOIN_CHECK_LAUNCH();
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(largest.data(), 0, sizeof(unsigned long long), stream));
  if (blocks_first > 0) {
    spread_kernel<T>
        <<<blocks_first, threads, 0, stream>>>(first, n_first, d, center, largest.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  if (blocks_second > 0) {
    spread_kernel<T>
        <<<blocks_second, threads, 0, stream>>>(second, n_second, d, center, largest.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  unsigned long long bits = 0;
  EPSJOIN_CUDA_TRY(
      cudaMemcpyAsync(s.center.data(), center, sizeof(double) * d, cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(
      cudaMemcpyAsync(&bits, largest.data(), sizeof bits, cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  double most = 0;
  static_assert(sizeof most == sizeof bits);
  std::memcpy(&most, &bits, sizeof most);
  if (most > 0 && std::isfinite(most)) s.exponent = half_exponent_for(most);
  return s;
}

half_scaling snapshot_device_scaling(resources& res, dataset_view a, dataset_view b) {
  gpu_state& gpu = acquire_gpu(res);
  cudaStream_t stream = gpu.slots[0]->stream.get();
  auto upload = [&](dataset_view set, device_buffer<double>& to) {
    to.reserve(std::max<std::size_t>(1, set.n * set.d));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(to.data(), set.data, sizeof(double) * set.n * set.d,
                                     cudaMemcpyHostToDevice, stream));
  };
  device_buffer<double> first, second;
  upload(a, first);
  upload(b, second);
  return device_half_scaling<double>(first.data(), static_cast<std::uint32_t>(a.n), second.data(),
                                     static_cast<std::uint32_t>(b.n), static_cast<int>(a.d),
                                     stream);
}

template half_scaling device_half_scaling<float>(const float*, std::uint32_t, const float*,
                                                 std::uint32_t, int, cudaStream_t);
template half_scaling device_half_scaling<double>(const double*, std::uint32_t, const double*,
                                                  std::uint32_t, int, cudaStream_t);

}  // namespace epsjoin::detail::fp16
