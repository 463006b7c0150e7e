#include <algorithm>
#include <cstring>

#include "base/parallel.hpp"
#include "base/upload.cuh"

namespace epsjoin::detail {

namespace {

constexpr std::size_t chunk_bytes = std::size_t{32} << 20;
constexpr std::size_t piece_bytes = std::size_t{1} << 20;  // one host thread's share at a time

/// An event without timing, for ordering only.
class order_event {
 public:
  order_event() { EPSJOIN_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~order_event() { EPSJOIN_CUDA_TRY_NO_THROW(cudaEventDestroy(event_)); }
  order_event(const order_event&) = delete;
  order_event& operator=(const order_event&) = delete;
  void record(cudaStream_t stream) { EPSJOIN_CUDA_TRY(cudaEventRecord(event_, stream)); }
  void wait() { EPSJOIN_CUDA_TRY(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

void upload_to_device(gpu_state& gpu, void* device, const void* host, std::size_t bytes,
                      cudaStream_t stream) {
  if (bytes < 4 * chunk_bytes || gpu.host_threads < 2) {
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  for (auto& chunk : gpu.upload_chunks) chunk.reserve(chunk_bytes);
  order_event sent[2];
  const auto* from = static_cast<const unsigned char*>(host);
  auto* to = static_cast<unsigned char*>(device);
  std::size_t k = 0;
  for (std::size_t at = 0; at < bytes; at += chunk_bytes, ++k) {
    const std::size_t n = std::min(chunk_bytes, bytes - at);
    const std::size_t b = k % 2;
    if (k >= 2) sent[b].wait();  // the chunk's previous copy has left
    unsigned char* staging = gpu.upload_chunks[b].data();
    parallel_for(gpu.host_threads, n, piece_bytes,
                 [&](std::size_t begin, std::size_t end, unsigned) {
                   std::memcpy(staging + begin, from + at + begin, end - begin);
                 });
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(to + at, staging, n, cudaMemcpyHostToDevice, stream));
    sent[b].record(stream);
  }
  // Both chunks free again before they can be reused by a later copy.
  sent[0].wait();
  sent[1].wait();
}

}  // namespace epsjoin::detail
