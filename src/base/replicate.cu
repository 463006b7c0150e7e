// Several devices' copies of one host point set (base/cuda_part.hpp): each device uploads a
// run of the rows, then fetches the other runs from its peers.

#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "base/cuda_part.hpp"
#include "base/gpu_state.cuh"
#include "base/upload.cuh"

namespace epsjoin::detail {

namespace {

struct replica_storage {
  std::vector<int> ordinals;
  std::vector<device_buffer<unsigned char>> copies;
  ~replica_storage() {
    // Freed on their own device, and the current device of whichever thread drops the last
    // reference left as it was. A device that was never reached (a missing ordinal ends the
    // upload) has nothing to free, and a failed switch must not leave its error for the
    // caller's next launch check to find.
    int current = 0;
    const bool known = cudaGetDevice(&current) == cudaSuccess;
    for (std::size_t g = 0; g < copies.size(); ++g) {
      if (copies[g].data() == nullptr) continue;
      if (cudaSetDevice(ordinals[g]) == cudaSuccess) {
        copies[g].release();
      } else {
        (void)cudaGetLastError();
      }
    }
    if (known && cudaSetDevice(current) != cudaSuccess) (void)cudaGetLastError();
  }
};

// Lets device `here` (current) read device `there`'s memory, once per pair in the process: the
// runtime refuses a second enabling with an error (which compute-sanitizer reports even when
// handled), and nothing here resets a device's primary context, where the access lives.
void enable_peer_access(int here, int there) {
  static std::mutex mutex;
  static std::set<std::pair<int, int>> enabled;
  std::lock_guard lock(mutex);
  if (here == there || enabled.contains({here, there})) return;
  int can = 0;
  EPSJOIN_CUDA_TRY(cudaDeviceCanAccessPeer(&can, here, there));
  // Without it the runtime still copies, through the host.
  if (can != 0) {
    const cudaError_t status = cudaDeviceEnablePeerAccess(there, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();  // enabled by other code of this process: as good
    } else {
      EPSJOIN_CUDA_TRY(status);
    }
  }
  enabled.insert({here, there});
}

// Runs body(g) for every device on a thread of its own (device g current there); the first
// failure is rethrown once all are done.
template <class Body>
void on_every_device(std::size_t count, Body&& body) {
  std::vector<std::exception_ptr> failures(count);
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < count; ++g) {
    threads.emplace_back([&, g] {
      try {
        body(g);
      } catch (...) {
        failures[g] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace

device_replicas replicate_to_devices(std::span<resources* const> devices, dataset_view points) {
  const std::size_t count = devices.size();
  const std::size_t row_bytes = points.d * size_of(points.type);
  const std::size_t bytes = points.n * row_bytes;
  auto first_byte = [&](std::size_t g) { return points.n * g / count * row_bytes; };
  auto storage = std::make_shared<replica_storage>();
  storage->copies.resize(count);
  for (resources* res : devices) storage->ordinals.push_back(res->device());
  const auto* host = static_cast<const unsigned char*>(points.data);

  // Each device its run of rows, from the host through its own pinned staging.
  on_every_device(count, [&](std::size_t g) {
    gpu_state& gpu = acquire_gpu(*devices[g]);
    cudaStream_t stream = gpu.slots[0]->stream.get();
    storage->copies[g].reserve(bytes);
    upload_to_device(gpu, storage->copies[g].data() + first_byte(g), host + first_byte(g),
                     first_byte(g + 1) - first_byte(g), stream);
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  });
  // Then every other run from the device that uploaded it.
  on_every_device(count, [&](std::size_t g) {
    gpu_state& gpu = acquire_gpu(*devices[g]);
    cudaStream_t stream = gpu.slots[0]->stream.get();
    const int here = storage->ordinals[g];
    for (std::size_t s = 0; s < count; ++s) {
      const int there = storage->ordinals[s];
      if (s == g || first_byte(s + 1) == first_byte(s)) continue;
      enable_peer_access(here, there);
      EPSJOIN_CUDA_TRY(cudaMemcpyPeerAsync(storage->copies[g].data() + first_byte(s), here,
                                           storage->copies[s].data() + first_byte(s), there,
                                           first_byte(s + 1) - first_byte(s), stream));
    }
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  });

  device_replicas replicas;
  for (std::size_t g = 0; g < count; ++g) {
    dataset_view view = points;
    view.data = storage->copies[g].data();
    view.space = memory_space::device;
    view.device = storage->ordinals[g];
    replicas.views.push_back(view);
  }
  replicas.h2d_bytes = bytes;
  replicas.owner = std::move(storage);
  return replicas;
}

}  // namespace epsjoin::detail
