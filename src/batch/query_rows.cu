#include <algorithm>
#include <cub/device/device_scan.cuh>

#include "batch/query_rows.cuh"
#include "core/expects.hpp"
#include "core/parallel.hpp"
#include "core/timer.hpp"
#include "gpu/cub_call.cuh"

namespace epsjoin::detail {

namespace {

constexpr unsigned block = 256;
constexpr std::uint64_t default_chunk_ids = std::uint64_t{1} << 24;  // 64 MiB a chunk

__global__ void scatter_counts_kernel(const std::uint32_t* __restrict__ counts,
                                      const std::uint32_t* __restrict__ ids, std::uint32_t positions,
                                      std::uint64_t* __restrict__ by_query) {
  const std::uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < positions) by_query[ids[p]] = counts[p];
}

__global__ void gather_starts_kernel(const std::uint64_t* __restrict__ offsets,
                                     const std::uint32_t* __restrict__ ids, std::uint32_t positions,
                                     std::uint64_t* __restrict__ row_offset) {
  const std::uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < positions) row_offset[p] = offsets[ids[p]];
}

/// A host array that a device copy overwrites whole: not zeroed first.
using host_offsets = std::vector<std::uint64_t, default_init_allocator<std::uint64_t>>;

}  // namespace

query_layout lay_out_by_query(gpu_state& gpu, const std::uint32_t* counts, const std::uint32_t* ids,
                              std::uint32_t positions, std::uint32_t queries, cudaStream_t stream) {
  EPSJOIN_ENSURE(positions <= queries, error, "internal: ", positions, " query positions for ",
                 queries, " queries");
  query_layout layout;
  layout.queries = queries;
  layout.offsets.reserve(std::size_t{queries} + 1);
  layout.row_offset.reserve(std::max<std::uint32_t>(positions, 1));
  // Queries without a position keep an empty row; the entry past the last becomes the total.
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(layout.offsets.data(), 0,
                                   sizeof(std::uint64_t) * (std::size_t{queries} + 1), stream));
  if (positions > 0) {
    scatter_counts_kernel<<<grid_size(positions, block), block, 0, stream>>>(counts, ids, positions,
                                                                           layout.offsets.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  // In place (CUB allows it for scans): the counts become the row starts.
  std::uint64_t* offsets = layout.offsets.data();
  cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, offsets, offsets, queries + 1, stream);
  });
  if (positions > 0) {
    gather_starts_kernel<<<grid_size(positions, block), block, 0, stream>>>(
        offsets, ids, positions, layout.row_offset.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(&layout.total, offsets + queries, sizeof layout.total,
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return layout;
}

void run_query_rows(gpu_state& gpu, const query_layout& layout, std::uint32_t positions,
                    const segment_filler& fill, delivery& out, const memory_budget& budget,
                    join_stats& stats, const std::function<void(double)>& progress) {
  stopwatch clock;
  cudaStream_t compute = gpu.slots[0]->stream.get();
  cudaStream_t copy = gpu.slots[1]->stream.get();
  const std::uint64_t total = layout.total;
  const unsigned threads = out.threads();

  device_buffer<std::uint32_t> table(std::max<std::uint64_t>(total, 1));
  cuda_event kernel_start, filled;
  if (total > 0) {
    kernel_start.record(compute);
    fill(0, row_segment{0, positions, 0, total}, table.data(), layout.row_offset.data(), compute);
    filled.record(compute);
  }

  // While the device fills: the layout to the host (the copy blocks this thread, not the GPU),
  // and the sink's table laid out, its first pages faulted in by the sink.
  host_offsets offsets(std::size_t{layout.queries} + 1);
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(offsets.data(), layout.offsets.data(),
                                   sizeof(std::uint64_t) * offsets.size(), cudaMemcpyDeviceToHost,
                                   copy));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(copy));
  id_vector counts(layout.queries);
  parallel_for(threads, counts.size(), std::size_t{1} << 18, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t q = b; q < e; ++q) counts[q] = static_cast<std::uint32_t>(offsets[q + 1] - offsets[q]);
  });
  stats.add_stage("upload", clock.seconds());

  const std::uint64_t chunk_ids =
      budget.overrides().chunk_ids > 0 ? budget.overrides().chunk_ids : default_chunk_ids;
  auto& ring = gpu.row_chunks;
  for (auto& r : ring) r.reserve(std::max<std::uint64_t>(std::min(chunk_ids, total), 1));
  const std::uint64_t ring_ids = std::min<std::uint64_t>(ring[0].capacity(), chunk_ids);
  const std::size_t chunks = static_cast<std::size_t>((total + ring_ids - 1) / ring_ids);
  std::vector<cuda_event> chunk_ready(ring.size());
  std::size_t issued = 0;
  auto issue = [&](std::size_t g) {
    const std::uint64_t first = g * ring_ids;
    const std::uint64_t size = std::min(ring_ids, total - first);
    const std::size_t slot = g % ring.size();
    EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(copy, filled.get(), 0));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(ring[slot].data(), table.data() + first,
                                     sizeof(std::uint32_t) * size, cudaMemcpyDeviceToHost, copy));
    chunk_ready[slot].record(copy);
  };
  while (issued < std::min(chunks, ring.size())) issue(issued++);

  clock.restart();
  out.lay_out_query_rows(counts, offsets);
  stats.add_stage("rows", clock.seconds());

  double waiting = 0, placing = 0;
  for (std::size_t g = 0; g < chunks; ++g) {
    stopwatch wait;
    EPSJOIN_CUDA_TRY(cudaEventSynchronize(chunk_ready[g % ring.size()].get()));
    waiting += wait.seconds();
    wait.restart();
    const std::uint64_t first = g * ring_ids;
    const std::uint64_t size = std::min(ring_ids, total - first);
    out.query_rows(first, {ring[g % ring.size()].data(), static_cast<std::size_t>(size)});
    placing += wait.seconds();
    // The slot just placed takes the chunk after the ones in flight.
    if (issued < chunks) issue(issued++);
    if (progress) progress(static_cast<double>(first + size) / static_cast<double>(total));
  }
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(compute));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(copy));
  stats.add_stage("fill+copy wait", waiting);
  stats.add_stage("assembly", placing);
  if (total > 0) stats.notes.push_back({"fill kernels seconds", concat(filled.since(kernel_start) * 1e-3)});
  stats.notes.push_back({"segments", concat("1 of ", total, " ids, laid out in query order on the "
                                            "device; ", chunks, " pinned chunks of up to ",
                                            ring_ids, " ids")});
}

}  // namespace epsjoin::detail
