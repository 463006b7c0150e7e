#include "base/gpu_state.cuh"

#include <dlfcn.h>

#include <algorithm>

#include "base/cuda_part.hpp"

namespace epsjoin::detail {

namespace {

// The runtime reports a machine with no NVIDIA driver as "CUDA driver version is insufficient",
// which sends users hunting for a driver upgrade. The runtime loads the driver library itself,
// so whether that library is loaded tells the two cases apart.
bool nvidia_driver_loaded() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver != nullptr) dlclose(driver);
  return driver != nullptr;
}

}  // namespace

std::string gpu_unavailable_reason(int device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (status == cudaErrorNoDevice ||
        (status == cudaErrorInsufficientDriver && !nvidia_driver_loaded())) {
      return "no CUDA device (no NVIDIA GPU or driver found)";
    }
    return concat("no usable CUDA device (", cudaGetErrorString(status), ")");
  }
  if (count == 0) return "no CUDA device (no NVIDIA GPU or driver found)";
  if (device < 0 || device >= count) {
    return concat("CUDA device ", device, " does not exist (", count, " visible)");
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return concat("cannot query CUDA device ", device);
  }
  if (prop.major < 7 || (prop.major == 7 && prop.minor < 5)) {
    return concat(prop.name, " (sm_", prop.major, prop.minor, ") is older than sm_75");
  }
  return {};
}

std::string gpu_unavailable_reason(int device, int min_major, std::string_view feature) {
  if (std::string why = gpu_unavailable_reason(device); !why.empty()) return why;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return concat("cannot query CUDA device ", device);
  }
  if (prop.major < min_major) {
    return concat(prop.name, " (sm_", prop.major, prop.minor, ") has no ", feature, " (sm_",
                  min_major, "0 or newer)");
  }
  return {};
}

gpu_state& acquire_gpu(resources& res) {
  if (res.gpu_state() == nullptr) {
    if (std::string why = gpu_unavailable_reason(res.device()); !why.empty()) {
      throw unavailable(why);
    }
    EPSJOIN_CUDA_TRY(cudaSetDevice(res.device()));
    auto state = std::make_unique<gpu_state>();
    state->device = res.device();
    EPSJOIN_CUDA_TRY(cudaGetDeviceProperties(&state->properties, res.device()));
    for (auto& slot : state->slots) slot = std::make_unique<stream_slot>();
    res.set_gpu_state(state.release(), [](gpu_state* s) { delete s; });
  }
  gpu_state& state = *res.gpu_state();
  EPSJOIN_CUDA_TRY(cudaSetDevice(state.device));
  state.host_threads = std::max(1u, res.threads());
  return state;
}

void prepare_gpu_state(resources& res) { acquire_gpu(res); }

}  // namespace epsjoin::detail
