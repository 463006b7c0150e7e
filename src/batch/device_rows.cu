#include "batch/device_rows.cuh"

#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "base/cub_call.cuh"
#include "base/timer.hpp"

namespace epsjoin::detail {

namespace {

// 64-bit copies of the counts, scanned in place into the offsets (a 32-bit scan would wrap).
__global__ void widen_counts(const std::uint32_t* counts, std::uint32_t positions,
                             std::uint64_t* out) {
  const std::uint64_t p = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p < positions) out[p] = counts[p];
  if (p == positions) out[p] = 0;
}

}  // namespace

device_row_layout lay_out_on_device(gpu_state& gpu, const std::uint32_t* counts,
                                    std::uint32_t positions, cudaStream_t stream) {
  device_row_layout layout;
  const std::size_t n = std::size_t{positions} + 1;
  layout.row_offset.reserve(n);
  constexpr unsigned block = 256;
  widen_counts<<<grid_size(n, block), block, 0, stream>>>(counts, positions,
                                                          layout.row_offset.data());
  EPSJOIN_CHECK_LAUNCH();
  std::uint64_t* offsets = layout.row_offset.data();
  cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, offsets, offsets, n, stream);
  });
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&layout.total, offsets + positions, sizeof layout.total,
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return layout;
}

void run_device_row_segments(gpu_state& gpu, const device_row_layout& layout,
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
  // cudaMalloc, not the stream-ordered pool: the pool's first use in a process cost 8 ms.
  const device_buffer<std::uint32_t> neighbors(largest);
  cuda_event start, end;
  start.record(stream);
  std::uint64_t done = 0;
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const row_segment& seg = segments[k];
    fill(k, seg, neighbors.data(), layout.row_offset.data(), stream);
    consumer.take_rows(
        {seg.first, seg.end, ids, layout.row_offset.data(), seg.begin, neighbors.data()}, stream);
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
