// Measuring the two parameters of the batch-size model on the running GPU, and choosing the
// per-stream result buffer size with it.

#include <unistd.h>

#include <algorithm>
#include <string>

#include "base/timer.hpp"
#include "batch/pipeline.cuh"
#include "model/batch_size.hpp"

namespace epsjoin::detail {

namespace {

__global__ void empty_batch_kernel(unsigned long long* counter) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(counter, 1ull);
}

// T2 per pair: allocating and freeing a 64 MiB pinned buffer. theta: one batch's fixed cost
// (reset the counter, launch, copy the counter back, wait), the mean of 20.
batch_model measure_batch_model(gpu_state& gpu) {
  batch_model model;
  constexpr std::size_t pairs = std::size_t{8} << 20;
  {
    stopwatch clock;
    pinned_buffer<index_pair> probe(pairs);
    probe.release();
    model.pinned_seconds_per_pair = clock.seconds() / static_cast<double>(pairs);
  }
  stream_slot& slot = *gpu.slots[0];
  slot.device_count.reserve(1);
  slot.staging_count.reserve(1);
  cudaStream_t stream = slot.stream.get();
  auto one_batch = [&] {
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(slot.device_count.data(), 0, sizeof(unsigned long long), stream));
    empty_batch_kernel<<<gpu.properties.multiProcessorCount, 256, 0, stream>>>(slot.device_count.data());
    EPSJOIN_CHECK_LAUNCH();
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot.staging_count.data(), slot.device_count.data(),
                                     sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    slot.stream.synchronize();
  };
  one_batch();  // warm-up: first launches pay for module loading
  constexpr int repeats = 20;
  stopwatch clock;
  for (int r = 0; r < repeats; ++r) one_batch();
  model.batch_overhead_seconds = clock.seconds() / repeats;
  return model;
}

std::string device_key(const gpu_state& gpu) {
  return concat(gpu.properties.name, " ", gpu.properties.totalGlobalMem >> 20, "MiB");
}

}  // namespace

std::uint64_t choose_capacity(gpu_state& gpu, std::uint64_t estimated_pairs,
                              const memory_budget& budget, std::string& reason) {
  const std::uint64_t requested = budget.overrides().batch_pairs;
  std::size_t free_bytes = 0, total_bytes = 0;
  EPSJOIN_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Pairs every stream's buffer already holds: reusable, so counted as free.
  std::uint64_t held = UINT64_MAX;
  for (const auto& slot : gpu.slots) held = std::min<std::uint64_t>(held, slot->device_pairs.capacity());
  const std::uint64_t streams = gpu.slots.size();
  const std::uint64_t device_pairs =
      (budget.device_bytes(free_bytes) / sizeof(index_pair) + held * streams) / streams;
  const std::uint64_t host_pairs = budget.pinned_bytes() / streams / sizeof(index_pair);
  const std::uint64_t max_pairs = std::min(device_pairs, host_pairs);
  constexpr std::uint64_t minimum = 1024;
  if (max_pairs < minimum) {
    throw out_of_memory(concat("GPU result buffers do not fit: ", free_bytes >> 20,
                               " MiB of device memory free, ", streams, " buffers of at least ",
                               minimum * sizeof(index_pair), " bytes needed"));
  }
  if (requested > 0) {
    reason = "batch_pairs given";
    return std::clamp<std::uint64_t>(requested, 1, max_pairs);
  }
  batch_model model;
  const std::string key = device_key(gpu);
  if (!load_batch_model(key, model)) {
    model = measure_batch_model(gpu);
    store_batch_model(key, model);
  }
  batch_size_limits limits;
  limits.already_allocated = held;
  limits.max_pairs = max_pairs;
  limits.n_streams = static_cast<int>(streams);
  const std::uint64_t chosen = choose_batch_pairs(model, estimated_pairs, limits);
  reason = concat("model of 001 sec. 5.4: T2 ", model.pinned_seconds_per_pair * 1e9,
                  " ns/pair, theta ", model.batch_overhead_seconds * 1e6, " us");
  return chosen;
}

}  // namespace epsjoin::detail
