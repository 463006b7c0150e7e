#include "batch/device_rows.cuh"

#include <algorithm>

#include "core/timer.hpp"

namespace epsjoin::detail {

void run_device_row_segments(gpu_state& gpu, const row_counts& rc,
                             std::span<const row_segment> segments, const std::uint32_t* ids,
                             const segment_filler& fill, device_row_consumer& consumer,
                             join_stats& stats, const std::function<void(double)>& progress) {
  if (segments.empty()) return;
  stopwatch clock;
  cudaStream_t stream = gpu.slots[0]->stream.get();
  std::uint64_t largest = 0, total = 0;
  for (const row_segment& s : segments) {
    largest = std::max(largest, s.size);
    total += s.size;
  }
  // One buffer: the consumer reads a segment on the same stream before the next fill writes it.
  device_buffer<std::uint32_t> neighbors(largest);
  device_buffer<std::uint64_t> row_offset(rc.offsets.size());
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(row_offset.data(), rc.offsets.data(),
                                   sizeof(std::uint64_t) * rc.offsets.size(),
                                   cudaMemcpyHostToDevice, stream));
  cuda_event start, end;
  start.record(stream);
  std::uint64_t done = 0;
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const row_segment& seg = segments[k];
    fill(k, seg, neighbors.data(), row_offset.data(), stream);
    consumer.take_rows({seg.first, seg.end, ids, row_offset.data(), seg.begin, neighbors.data()},
                       stream);
    if (progress) {
      // Bounds the queue to one segment ahead, so progress means something.
      EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
      done += seg.size;
      progress(static_cast<double>(done) / static_cast<double>(total));
    }
  }
  end.record(stream);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  stats.add_stage("fill+consume on device", clock.seconds());
  stats.notes.push_back({"fill+consume kernels seconds", concat(end.since(start) * 1e-3)});
  stats.notes.push_back({"device rows", concat(segments.size(), " segments of up to ", largest,
                                               " ids, consumed on the device")});
}

}  // namespace epsjoin::detail
