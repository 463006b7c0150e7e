#pragma once
// The CUDA and cuBLAS plumbing of the cuBLAS baseline: checked calls that throw, and owners of
// device memory, streams, events and cuBLAS handles, so that an early error frees everything.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace cublas_join {

[[noreturn]] inline void fail_call(const char* what, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + what);
}

#define CUDA_TRY(call)                                                                             \
  do {                                                                                             \
    const cudaError_t status_ = (call);                                                            \
    if (status_ != cudaSuccess) fail_call(cudaGetErrorString(status_), #call, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_TRY(call)                                                    \
  do {                                                                      \
    const cublasStatus_t status_ = (call);                                  \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                   \
      fail_call(cublasGetStatusString(status_), #call, __FILE__, __LINE__); \
  } while (0)

// Destructors must not throw; a failure there is reported and the program carries on.
#define CUDA_TRY_NO_THROW(call)                                                                 \
  do {                                                                                          \
    const cudaError_t status_ = (call);                                                         \
    if (status_ != cudaSuccess)                                                                 \
      std::fprintf(stderr, "cublas_join: %s failed: %s\n", #call, cudaGetErrorString(status_)); \
  } while (0)

template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t count) : count_(count) {
    CUDA_TRY(cudaMalloc(&data_, std::max<std::size_t>(count, 1) * sizeof(T)));
  }
  ~device_buffer() { CUDA_TRY_NO_THROW(cudaFree(data_)); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

struct stream {
  cudaStream_t handle = nullptr;
  stream() { CUDA_TRY(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking)); }
  ~stream() { CUDA_TRY_NO_THROW(cudaStreamDestroy(handle)); }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
};

struct event {
  cudaEvent_t handle = nullptr;
  event() { CUDA_TRY(cudaEventCreate(&handle)); }
  ~event() { CUDA_TRY_NO_THROW(cudaEventDestroy(handle)); }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
};

/// One handle per stream: a handle shared by concurrent streams would share its workspace.
struct blas {
  cublasHandle_t handle = nullptr;
  explicit blas(cudaStream_t s) {
    CUBLAS_TRY(cublasCreate(&handle));
    CUBLAS_TRY(cublasSetStream(handle, s));
  }
  ~blas() {
    if (cublasDestroy(handle) != CUBLAS_STATUS_SUCCESS)
      std::fprintf(stderr, "cublasDestroy failed\n");
  }
  blas(const blas&) = delete;
  blas& operator=(const blas&) = delete;
};

inline double elapsed_seconds(const event& start, const event& stop) {
  float ms = 0;
  CUDA_TRY(cudaEventElapsedTime(&ms, start.handle, stop.handle));
  return ms * 1e-3;
}

inline std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  CUBLAS_TRY(cublasGetProperty(MAJOR_VERSION, &major));
  CUBLAS_TRY(cublasGetProperty(MINOR_VERSION, &minor));
  CUBLAS_TRY(cublasGetProperty(PATCH_LEVEL, &patch));
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace cublas_join
