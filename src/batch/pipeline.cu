#include <algorithm>
#include <deque>

#include "base/timer.hpp"
#include "batch/pipeline.cuh"

namespace epsjoin::detail {

std::uint64_t count_batch(gpu_state& gpu, const strided_batch& batch, const batch_launcher& launch) {
  stream_slot& slot = *gpu.slots[0];
  slot.device_count.reserve(1);
  slot.staging_count.reserve(1);
  cudaStream_t stream = slot.stream.get();
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(slot.device_count.data(), 0, sizeof(unsigned long long), stream));
  result_target target;
  target.counter = slot.device_count.data();
  launch(batch, target, stream);
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot.staging_count.data(), slot.device_count.data(),
                                   sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  slot.stream.synchronize();
  return *slot.staging_count.data();
}

namespace {

struct in_flight {
  strided_batch batch;
  int slot;
};

}  // namespace

void run_batches(gpu_state& gpu, const std::vector<strided_batch>& batches, std::uint64_t capacity,
                 const batch_launcher& launch, result_sink& sink, pipeline_stats& stats,
                 const std::function<void(double)>& progress) {
  stats.capacity = capacity;
  std::uint64_t total_queries = 0, done_queries = 0;
  for (const auto& b : batches) total_queries += b.count;
  for (auto& slot : gpu.slots) {
    slot->device_pairs.reserve(capacity);
    slot->staging.reserve(capacity);
    slot->device_count.reserve(1);
    slot->staging_count.reserve(1);
  }

  std::deque<strided_batch> pending(batches.begin(), batches.end());
  std::deque<in_flight> running;  // in issue order; the oldest is collected first
  std::vector<bool> busy(gpu.slots.size(), false);

  auto issue = [&](const strided_batch& batch, int s) {
    stream_slot& slot = *gpu.slots[s];
    cudaStream_t stream = slot.stream.get();
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(slot.device_count.data(), 0, sizeof(unsigned long long), stream));
    result_target target;
    target.pairs = slot.device_pairs.data();
    target.counter = slot.device_count.data();
    target.capacity = slot.device_pairs.capacity();
    slot.kernel_start.record(stream);
    launch(batch, target, stream);
    slot.kernel_end.record(stream);
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot.staging_count.data(), slot.device_count.data(),
                                     sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    busy[s] = true;
    running.push_back({batch, s});
  };

  while (!pending.empty() || !running.empty()) {
    for (int s = 0; s < static_cast<int>(busy.size()) && !pending.empty(); ++s) {
      if (busy[s]) continue;
      issue(pending.front(), s);
      pending.pop_front();
    }
    const in_flight job = running.front();
    running.pop_front();
    stream_slot& slot = *gpu.slots[job.slot];
    stopwatch clock;
    slot.stream.synchronize();
    stats.kernel_wait += clock.seconds();
    stats.kernel += slot.kernel_end.since(slot.kernel_start) * 1e-3;
    const std::uint64_t produced = *slot.staging_count.data();
    if (produced > slot.device_pairs.capacity()) {
      ++stats.overflows;
      busy[job.slot] = false;
      if (job.batch.count > 1) {
        // Re-cut and run the pieces first, so the deque does not grow without bound.
        const auto pieces = split_batch(job.batch, produced, slot.device_pairs.capacity());
        pending.insert(pending.begin(), pieces.begin(), pieces.end());
      } else {
        // One query with more neighbours than the buffer holds: grow this stream's buffers.
        slot.device_pairs.reserve(produced);
        slot.staging.reserve(produced);
        issue(job.batch, job.slot);
        running.pop_back();
        running.push_front({job.batch, job.slot});
      }
      continue;
    }
    clock.restart();
    if (produced > 0) {
      EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot.staging.data(), slot.device_pairs.data(),
                                       produced * sizeof(index_pair), cudaMemcpyDeviceToHost,
                                       slot.stream.get()));
      slot.stream.synchronize();
    }
    stats.transfer += clock.seconds();
    busy[job.slot] = false;
    // Refill this stream before the (long) hand-over, so the GPU keeps working meanwhile.
    if (!pending.empty()) {
      issue(pending.front(), job.slot);
      pending.pop_front();
      // The slot's staging buffer is still being read below; issue() only queued device work
      // and the count copy, which writes staging_count, not staging.
    }
    clock.restart();
    if (produced > 0) sink.consume({slot.staging.data(), static_cast<std::size_t>(produced)});
    stats.assembly += clock.seconds();
    stats.pairs += produced;
    ++stats.batches;
    done_queries += job.batch.count;
    if (progress) progress(static_cast<double>(done_queries) / static_cast<double>(total_queries));
  }
}

}  // namespace epsjoin::detail
