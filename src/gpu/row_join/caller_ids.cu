#include "gpu/row_join/caller_ids.cuh"

#include <algorithm>

#include "base/cuda_check.cuh"
#include "base/expects.hpp"
#include "base/upload.cuh"

namespace epsjoin::detail::row_join {

namespace {

__global__ void compose_kernel(std::uint32_t* out, const std::uint32_t* caller_ids,
                               const std::uint32_t* permutation, std::uint32_t n) {
  const std::uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < n) out[p] = caller_ids[permutation[p]];
}

}  // namespace

device_buffer<std::uint32_t> compose_caller_ids(gpu_state& gpu, cudaStream_t stream,
                                                const std::uint32_t* permutation, std::uint32_t n,
                                                std::span<const std::uint32_t> caller_ids) {
  EPSJOIN_ENSURE(caller_ids.size() >= n, error, "internal: ", caller_ids.size(),
                 " caller ids for ", n, " indexed points");
  device_buffer<std::uint32_t> composed(std::max<std::uint32_t>(n, 1));
  if (n == 0) return composed;
  device_buffer<std::uint32_t> uploaded(caller_ids.size());
  upload_to_device(gpu, uploaded.data(), caller_ids.data(),
                   caller_ids.size() * sizeof(std::uint32_t), stream);
  constexpr unsigned threads = 256;
  compose_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(composed.data(),
                                                                       uploaded.data(),
                                                                       permutation, n);
  EPSJOIN_CHECK_LAUNCH();
  // Before `uploaded` is freed.
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return composed;
}

}  // namespace epsjoin::detail::row_join
