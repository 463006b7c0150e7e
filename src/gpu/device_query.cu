#include <vector>

#include "epsjoin/build_info.hpp"
#include "gpu/cuda_check.cuh"

namespace epsjoin::detail {

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
