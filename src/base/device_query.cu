#include <string>
#include <vector>

#include "base/cuda_check.cuh"
#include "base/cuda_part.hpp"
#include "epsjoin/build_info.hpp"

namespace epsjoin::detail {

bool cuda_part_built() noexcept { return true; }

std::string cuda_architectures() { return EPSJOIN_CUDA_ARCHITECTURES; }

std::vector<cuda_device> query_cuda_devices() {
  int count = 0;
  // No driver or no device is an answer here (an empty list), not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  std::vector<cuda_device> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem,
                       prop.multiProcessorCount});
  }
  return devices;
}

}  // namespace epsjoin::detail
