#pragma once
// Checking every CUDA call: throwing at the public boundary, logging in destructors.

#include <cuda_runtime.h>

#include <cstdio>

#include "base/expects.hpp"

namespace epsjoin::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                          int line) {
  if (status == cudaErrorMemoryAllocation) {
    throw out_of_memory(concat(call, " failed at ", file, ":", line, ": ",
                               cudaGetErrorString(status)));
  }
  throw cuda_error(concat(call, " failed at ", file, ":", line, ": ", cudaGetErrorName(status),
                          ": ", cudaGetErrorString(status)));
}

}  // namespace epsjoin::detail

#define EPSJOIN_CUDA_TRY(call)                                                             \
  do {                                                                                     \
    const cudaError_t epsjoin_status_ = (call);                                            \
    if (epsjoin_status_ != cudaSuccess)                                                    \
      ::epsjoin::detail::throw_cuda_error(epsjoin_status_, #call, __FILE__, __LINE__);     \
  } while (0)

/// For destructors: report and carry on (throwing there would terminate).
#define EPSJOIN_CUDA_TRY_NO_THROW(call)                                                    \
  do {                                                                                     \
    const cudaError_t epsjoin_status_ = (call);                                            \
    if (epsjoin_status_ != cudaSuccess)                                                    \
      std::fprintf(stderr, "epsjoin: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                   cudaGetErrorString(epsjoin_status_));                                   \
  } while (0)

/// After a kernel launch: launch errors always, execution errors too in debug builds.
#ifdef NDEBUG
#define EPSJOIN_CHECK_LAUNCH() EPSJOIN_CUDA_TRY(cudaPeekAtLastError())
#else
#define EPSJOIN_CHECK_LAUNCH()                  \
  do {                                          \
    EPSJOIN_CUDA_TRY(cudaPeekAtLastError());    \
    EPSJOIN_CUDA_TRY(cudaDeviceSynchronize());  \
  } while (0)
#endif
