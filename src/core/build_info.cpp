#include "epsjoin/build_info.hpp"

#ifndef EPSJOIN_VERSION
#define EPSJOIN_VERSION "0.0.0"
#endif
#ifndef EPSJOIN_BUILD_TYPE
#define EPSJOIN_BUILD_TYPE "unknown"
#endif
#ifndef EPSJOIN_CUDA_ARCHITECTURES
#define EPSJOIN_CUDA_ARCHITECTURES ""
#endif

namespace epsjoin {

#ifdef EPSJOIN_HAS_CUDA
namespace detail {
std::vector<cuda_device> query_cuda_devices();  // src/gpu
}
#endif

build_info build() {
  build_info info;
  info.version = EPSJOIN_VERSION;
  info.build_type = EPSJOIN_BUILD_TYPE;
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "gcc " __VERSION__;
#endif
#ifdef EPSJOIN_HAS_CUDA
  info.cuda = true;
  info.cuda_architectures = EPSJOIN_CUDA_ARCHITECTURES;
#endif
  return info;
}

std::vector<cuda_device> cuda_devices() {
#ifdef EPSJOIN_HAS_CUDA
  return detail::query_cuda_devices();
#else
  return {};
#endif
}

}  // namespace epsjoin
