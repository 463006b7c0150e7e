#include "epsjoin/build_info.hpp"

#include "base/cuda_part.hpp"

#ifndef EPSJOIN_VERSION
#define EPSJOIN_VERSION "0.0.0"
#endif
#ifndef EPSJOIN_BUILD_TYPE
#define EPSJOIN_BUILD_TYPE "unknown"
#endif

namespace epsjoin {

build_info build() {
  build_info info;
  info.version = EPSJOIN_VERSION;
  info.build_type = EPSJOIN_BUILD_TYPE;
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "gcc " __VERSION__;
#endif
  info.cuda = detail::cuda_part_built();
  info.cuda_architectures = detail::cuda_architectures();
  return info;
}

std::vector<cuda_device> cuda_devices() {
  return detail::query_cuda_devices();
}

}  // namespace epsjoin
