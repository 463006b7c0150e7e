#pragma once
// RAII owners of device and pinned host memory. The only place in the library that calls
// cudaMalloc / cudaMallocHost / cudaMallocAsync; buffers grow on demand and are reused across
// batches and runs.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "base/cuda_check.cuh"

namespace epsjoin::detail {

/// Where a buffer's memory comes from: device memory, or page-locked host memory that the GPU
/// copies to and from at full speed.
struct device_memory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    EPSJOIN_CUDA_TRY(cudaMalloc(&p, bytes));
    return p;
  }
  static void free(void* p) noexcept { EPSJOIN_CUDA_TRY_NO_THROW(cudaFree(p)); }
};

struct pinned_memory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    EPSJOIN_CUDA_TRY(cudaMallocHost(&p, bytes));
    return p;
  }
  static void free(void* p) noexcept { EPSJOIN_CUDA_TRY_NO_THROW(cudaFreeHost(p)); }
};

/// An owned, grow-only array of T in `Memory`.
template <class T, class Memory>
class cuda_buffer {
 public:
  cuda_buffer() = default;
  explicit cuda_buffer(std::size_t n) { reserve(n); }
  ~cuda_buffer() { release(); }
  cuda_buffer(cuda_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}
  cuda_buffer& operator=(cuda_buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  cuda_buffer(const cuda_buffer&) = delete;
  cuda_buffer& operator=(const cuda_buffer&) = delete;

  /// Ensures room for n elements; contents are NOT preserved when it grows.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    release();
    data_ = static_cast<T*>(Memory::allocate(n * sizeof(T)));
    capacity_ = n;
  }
  void release() noexcept {
    if (data_ != nullptr) Memory::free(data_);
    data_ = nullptr;
    capacity_ = 0;
  }
  T* data() const noexcept { return data_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

template <class T>
using device_buffer = cuda_buffer<T, device_memory>;
template <class T>
using pinned_buffer = cuda_buffer<T, pinned_memory>;

/// Stream-ordered device scratch for one piece of work on one stream: freeing it does not wait
/// for the whole device (cudaFree would, other streams' kernels included).
template <class T>
class stream_scratch {
 public:
  stream_scratch(std::size_t n, cudaStream_t stream) : stream_(stream) {
    if (n > 0) {
      EPSJOIN_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), n * sizeof(T), stream));
    }
  }
  ~stream_scratch() {
    if (data_ != nullptr) EPSJOIN_CUDA_TRY_NO_THROW(cudaFreeAsync(data_, stream_));
  }
  stream_scratch(const stream_scratch&) = delete;
  stream_scratch& operator=(const stream_scratch&) = delete;
  T* data() const noexcept { return data_; }

 private:
  T* data_ = nullptr;
  cudaStream_t stream_;
};

/// Resizes `out` to n and copies n elements from `device` into it, on `stream` and not waited
/// for. U and V need only have one size (a device type and its host twin).
template <class U, class V = U>
void copy_to_host(std::vector<V>& out, const U* device, std::size_t n, cudaStream_t stream) {
  static_assert(sizeof(U) == sizeof(V));
  out.resize(n);
  if (n > 0) {
    EPSJOIN_CUDA_TRY(
        cudaMemcpyAsync(out.data(), device, n * sizeof(U), cudaMemcpyDeviceToHost, stream));
  }
}

/// An owned CUDA stream.
class cuda_stream {
 public:
  cuda_stream() { EPSJOIN_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  /// A stream whose kernels' blocks are scheduled before those of lower-priority streams (lower
  /// numbers first; see cudaDeviceGetStreamPriorityRange).
  explicit cuda_stream(int priority) {
    EPSJOIN_CUDA_TRY(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority));
  }
  ~cuda_stream() {
    if (stream_ != nullptr) EPSJOIN_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream_));
  }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

/// An owned CUDA event (timing enabled).
class cuda_event {
 public:
  cuda_event() { EPSJOIN_CUDA_TRY(cudaEventCreate(&event_)); }
  ~cuda_event() {
    if (event_ != nullptr) EPSJOIN_CUDA_TRY_NO_THROW(cudaEventDestroy(event_));
  }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  cudaEvent_t get() const noexcept { return event_; }
  void record(cudaStream_t stream) { EPSJOIN_CUDA_TRY(cudaEventRecord(event_, stream)); }
  /// Milliseconds from `start` to this event; both must have completed.
  float since(const cuda_event& start) const {
    float ms = 0;
    EPSJOIN_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace epsjoin::detail
