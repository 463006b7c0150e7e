#include <algorithm>

#include "base/cub_call.cuh"
#include "base/cuda_check.cuh"
#include "base/expects.hpp"
#include "base/memory.cuh"
#include "base/timer.hpp"
#include "base/pinned_ring.cuh"
#include "batch/rows.cuh"
#include "results/row_copy.hpp"

namespace epsjoin::detail {

namespace {

constexpr std::uint64_t min_segment_ids = std::uint64_t{1} << 20;

struct chunk {
  std::size_t segment;
  std::uint64_t offset, size;  // within the segment
};

// Each warp adds its threads' sums into the two totals: a few thousand atomics for any count.
__global__ void sum_counts_kernel(const std::uint32_t* counts, const std::uint32_t* ids,
                                  std::uint32_t positions, std::uint64_t below,
                                  unsigned long long* totals) {
  unsigned long long all = 0, kept = 0;
  for (std::uint64_t p = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; p < positions;
       p += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint32_t c = counts[p];
    all += c;
    if ((ids != nullptr ? std::uint64_t{ids[p]} : p) < below) kept += c;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    all += __shfl_down_sync(0xffffffffu, all, offset);
    kept += __shfl_down_sync(0xffffffffu, kept, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&totals[0], all);
    atomicAdd(&totals[1], kept);
  }
}

}  // namespace

count_totals sum_row_counts(const std::uint32_t* device_counts, const std::uint32_t* device_ids,
                            std::uint32_t positions, std::size_t below, cudaStream_t stream) {
  count_totals totals;
  if (positions == 0) return totals;
  stream_scratch<unsigned long long> sums(2, stream);
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(sums.data(), 0, 2 * sizeof(unsigned long long), stream));
  constexpr unsigned block = 256;
  const unsigned blocks = std::min(grid_size(positions, block), 1024u);
  sum_counts_kernel<<<blocks, block, 0, stream>>>(device_counts, device_ids, positions,
                                                  static_cast<std::uint64_t>(below), sums.data());
  EPSJOIN_CHECK_LAUNCH();
  unsigned long long host[2] = {0, 0};
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(host, sums.data(), sizeof host, cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  totals.all = host[0];
  totals.below = host[1];
  return totals;
}

row_counts fetch_row_counts(const std::uint32_t* device_counts, const std::uint32_t* device_ids,
                            std::uint32_t positions, cudaStream_t stream) {
  row_counts rc;
  rc.counts.resize(positions);
  rc.ids.resize(positions);
  if (positions > 0) {
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(rc.counts.data(), device_counts, sizeof(std::uint32_t) * positions,
                                     cudaMemcpyDeviceToHost, stream));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(rc.ids.data(), device_ids, sizeof(std::uint32_t) * positions,
                                     cudaMemcpyDeviceToHost, stream));
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  rc.offsets.resize(static_cast<std::size_t>(positions) + 1);
  rc.offsets[0] = 0;
  for (std::uint32_t p = 0; p < positions; ++p) rc.offsets[p + 1] = rc.offsets[p] + rc.counts[p];
  return rc;
}

std::vector<row_segment> plan_segments(const row_counts& rc, std::span<const std::uint32_t> cut_points,
                                       std::uint64_t capacity) {
  std::vector<row_segment> segments;
  const auto positions = static_cast<std::uint32_t>(rc.counts.size());
  row_segment open{0, 0, 0, 0};
  auto close = [&](std::uint32_t at) {
    open.end = at;
    open.size = rc.offsets[at] - open.begin;
    if (open.size > 0) segments.push_back(open);
    open = {at, at, rc.offsets[at], 0};
  };
  for (std::size_t i = 0; i < cut_points.size(); ++i) {
    const std::uint32_t from = cut_points[i];
    const std::uint32_t to = i + 1 < cut_points.size() ? cut_points[i + 1] : positions;
    const std::uint64_t piece = rc.offsets[to] - rc.offsets[from];
    if (rc.offsets[from] > open.begin && rc.offsets[from] - open.begin + piece > capacity) close(from);
  }
  close(positions);
  return segments;
}

std::uint64_t segment_capacity(std::uint64_t total_ids, const memory_budget& budget) {
  if (budget.overrides().segment_ids > 0) return budget.overrides().segment_ids;
  std::size_t free = 0, total = 0;
  EPSJOIN_CUDA_TRY(cudaMemGetInfo(&free, &total));
  const std::uint64_t one = budget.device_bytes(free) / sizeof(std::uint32_t);
  if (total_ids <= one) return std::max(total_ids, std::uint64_t{1});
  return std::max(one / 2, min_segment_ids);
}

void run_row_segments(gpu_state& gpu, const row_counts& rc, std::span<const row_segment> segments,
                      std::size_t n_queries, const segment_filler& fill, delivery& out,
                      const memory_budget& budget, join_stats& stats,
                      const std::function<void(double)>& progress, rows_beside* beside) {
  stopwatch clock;
  const bool rows = out.form() == delivery_form::rows;
  // Laying the rows out in the sink touches every page of a fresh table (for a large result the
  // longest host step before assembly), so it runs after the first kernels and copies are
  // queued: the GPU works meanwhile.
  auto lay_out_rows = [&] {
    stopwatch rows_clock;
    if (rows) {
      std::vector<std::uint32_t> by_query(n_queries, 0);
      for (std::size_t p = 0; p < rc.ids.size(); ++p) {
        by_query[rc.ids[p]] = rc.counts[p] + (beside != nullptr ? beside->counts[p] : 0);
      }
      const row_destination dest = out.lay_out(by_query);
      if (beside != nullptr) beside->destination = dest;
    }
    stats.add_stage("rows", rows_clock.seconds());
  };
  if (segments.empty()) {
    lay_out_rows();
    return;
  }

  cudaStream_t compute = gpu.slots[0]->stream.get();
  cudaStream_t copy = gpu.slots[1]->stream.get();
  std::uint64_t largest = 0, total = 0;
  for (const row_segment& s : segments) {
    largest = std::max(largest, s.size);
    total += s.size;
  }
  const std::size_t buffers = segments.size() > 1 ? 2 : 1;
  std::vector<device_buffer<std::uint32_t>> device(buffers);
  for (auto& d : device) d.reserve(largest);
  device_buffer<std::uint64_t> row_offset(rc.offsets.size());
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(row_offset.data(), rc.offsets.data(),
                                   sizeof(std::uint64_t) * rc.offsets.size(), cudaMemcpyHostToDevice,
                                   compute));
  const std::uint64_t chunk_ids = ring_chunk_ids(budget);
  auto& ring = gpu.row_chunks;
  for (auto& r : ring) r.reserve(std::min(chunk_ids, largest));
  const std::uint64_t ring_ids = ring[0].capacity();

  std::vector<chunk> chunks;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    for (std::uint64_t off = 0; off < segments[s].size; off += ring_ids) {
      chunks.push_back({s, off, std::min(ring_ids, segments[s].size - off)});
    }
  }
  std::vector<cuda_event> kernel_start(segments.size()), kernel_end(segments.size());
  std::vector<cuda_event> filled(buffers), copied(buffers);
  stats.add_stage("upload", clock.seconds());

  auto launch = [&](std::size_t s) {
    const std::size_t b = s % buffers;
    if (s >= buffers) EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(compute, copied[b].get(), 0));
    kernel_start[s].record(compute);
    fill(s, segments[s], device[b].data(), row_offset.data(), compute);
    kernel_end[s].record(compute);
    filled[b].record(compute);
  };
  std::size_t launched = 0;
  while (launched < std::min(buffers, segments.size())) launch(launched++);

  const row_layout layout{rc.offsets, rc.ids};
  std::uint64_t done = 0;
  const ring_times times = copy_through_ring(
      ring, copy, chunks.size(),
      [&](std::size_t g, std::uint32_t* slot) {
        const chunk& c = chunks[g];
        const std::size_t b = c.segment % buffers;
        EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(copy, filled[b].get(), 0));
        EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot, device[b].data() + c.offset,
                                         sizeof(std::uint32_t) * c.size, cudaMemcpyDeviceToHost,
                                         copy));
        if (c.offset + c.size == segments[c.segment].size) {
          // The segment's buffer is free once this copy is done: the segment after next may use
          // it.
          copied[b].record(copy);
          if (launched < segments.size()) launch(launched++);
        }
      },
      [&](std::size_t g, const std::uint32_t* slot) {
        const chunk& c = chunks[g];
        out.rows(layout, segments[c.segment].begin + c.offset, {slot, c.size});
        done += c.size;
        if (progress) progress(static_cast<double>(done) / static_cast<double>(total));
      },
      lay_out_rows);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(compute));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(copy));
  double kernel = 0;
  for (std::size_t s = 0; s < segments.size(); ++s) kernel += kernel_end[s].since(kernel_start[s]) * 1e-3;
  stats.add_stage("fill+copy wait", times.waiting);
  stats.add_stage("assembly", times.placing);
  stats.notes.push_back({"fill kernels seconds", concat(kernel)});
  stats.notes.push_back({"segments", concat(segments.size(), " of up to ", largest, " ids; ",
                                            chunks.size(), " pinned chunks of up to ", ring_ids,
                                            " ids")});
}

}  // namespace epsjoin::detail
