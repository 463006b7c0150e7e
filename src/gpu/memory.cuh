#pragma once
// RAII owners of device and pinned host memory. The only place in the library that calls
// cudaMalloc / cudaMallocHost; buffers grow on demand and are reused across batches and runs.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu/cuda_check.cuh"

namespace epsjoin::detail {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t n) { reserve(n); }
  ~device_buffer() { release(); }
  device_buffer(device_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}
  device_buffer& operator=(device_buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  /// Ensures room for n elements; contents are NOT preserved when it grows.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    release();
    void* p = nullptr;
    EPSJOIN_CUDA_TRY(cudaMalloc(&p, n * sizeof(T)));
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }
  void release() noexcept {
    if (data_ != nullptr) EPSJOIN_CUDA_TRY_NO_THROW(cudaFree(data_));
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
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t n) { reserve(n); }
  ~pinned_buffer() { release(); }
  pinned_buffer(pinned_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;

  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    release();
    void* p = nullptr;
    EPSJOIN_CUDA_TRY(cudaMallocHost(&p, n * sizeof(T)));
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }
  void release() noexcept {
    if (data_ != nullptr) EPSJOIN_CUDA_TRY_NO_THROW(cudaFreeHost(data_));
    data_ = nullptr;
    capacity_ = 0;
  }
  T* data() const noexcept { return data_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// An owned CUDA stream.
class cuda_stream {
 public:
  cuda_stream() { EPSJOIN_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
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
