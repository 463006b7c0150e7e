// base/cuda_part.hpp for a build without CUDA (built only then: CMake leaves *_absent.cpp out
// of a CUDA build). Every answer says that the GPU part is absent; what can only be asked of a
// CUDA build throws `unavailable`.

#include "base/cuda_part.hpp"
#include "epsjoin/error.hpp"

namespace epsjoin::detail {

namespace {
constexpr const char* without_cuda = "epsjoin was built without CUDA";
}  // namespace

bool cuda_part_built() noexcept { return false; }

std::string cuda_architectures() { return {}; }

std::vector<cuda_device> query_cuda_devices() { return {}; }

std::string gpu_unavailable_reason(int /*device*/) { return without_cuda; }

void prepare_gpu_state(resources& /*res*/) { throw unavailable(without_cuda); }

void check_device_points(resources& /*res*/, dataset_view /*v*/, const char* what) {
  throw unavailable(std::string(what) + " lies in device memory, which needs epsjoin built with CUDA");
}

device_csr upload_table(int /*device*/, const neighbor_table& /*table*/) {
  throw unavailable("a result in device memory (device_csr_sink) needs epsjoin built with CUDA");
}

device_replicas replicate_to_devices(std::span<resources* const> /*devices*/,
                                     dataset_view /*points*/) {
  throw unavailable(without_cuda);
}

}  // namespace epsjoin::detail
