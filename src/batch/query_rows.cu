#include <algorithm>
#include <cstring>
#include <memory>
#include <cub/device/device_scan.cuh>

#include "base/cub_call.cuh"
#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "base/timer.hpp"
#include "base/pinned_ring.cuh"
#include "batch/query_rows.cuh"

namespace epsjoin::detail {

namespace {

constexpr unsigned block = 256;

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

// Room for each row's self pair, in front of it, holding the query's id: row starts move by
// one slot for every query before them and one for their own.
__global__ void open_self_slots_kernel(const std::uint64_t* __restrict__ offsets,
                                       const std::uint32_t* __restrict__ ids, std::uint32_t positions,
                                       std::uint32_t queries, std::uint64_t* __restrict__ row_offset,
                                       std::uint32_t* __restrict__ table) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < positions) row_offset[i] += std::uint64_t{ids[i]} + 1;
  if (i < queries) table[offsets[i] + i] = i;
}

/// Row starts after opening one slot before every row (open_self_slots_kernel).
__global__ void shift_for_self_slots_kernel(std::uint64_t* __restrict__ offsets,
                                            std::uint32_t entries) {
  const std::uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q < entries) offsets[q] += q;
}

/// What a device table's arrays are owned by.
struct device_table_storage {
  device_buffer<std::uint64_t> offsets;
  device_buffer<std::uint32_t> neighbors;
};

/// A host array that a device copy overwrites whole: not zeroed first.
using host_offsets = offset_vector;

/// Copies `bytes` from `device` to `host` through the pinned ring in pieces of `slot_bytes`, on
/// `stream`, each piece placed by `threads` threads.
template <class Ring>
void copy_bytes_through_ring(Ring& ring, std::size_t slot_bytes, const void* device, void* host,
                             std::size_t bytes, cudaStream_t stream, unsigned threads) {
  const std::size_t pieces = (bytes + slot_bytes - 1) / slot_bytes;
  copy_through_ring(
      ring, stream, pieces,
      [&](std::size_t k, void* slot) {
        const std::size_t at = k * slot_bytes;
        EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot, static_cast<const char*>(device) + at,
                                         std::min(slot_bytes, bytes - at), cudaMemcpyDeviceToHost,
                                         stream));
      },
      [&](std::size_t k, const void* slot) {
        const std::size_t at = k * slot_bytes, size = std::min(slot_bytes, bytes - at);
        const char* from = static_cast<const char*>(slot);
        char* to = static_cast<char*>(host) + at;
        constexpr std::size_t grain = std::size_t{1} << 20;
        parallel_for(threads, (size + grain - 1) / grain, 1,
                     [&](std::size_t b, std::size_t e, unsigned) {
                       const std::size_t lo = b * grain, hi = std::min(size, e * grain);
                       std::memcpy(to + lo, from + lo, hi - lo);
                     });
      });
}

}  // namespace

query_layout lay_out_by_query(gpu_state& gpu, const std::uint32_t* counts, const std::uint32_t* ids,
                              std::uint32_t positions, std::uint32_t queries, cudaStream_t stream) {
  EPSJOIN_ENSURE(positions <= queries, error, "internal: ", positions, " query positions for ",
                 queries, " queries");
  query_layout layout;
  layout.queries = queries;
  layout.positions = positions;
  layout.ids = ids;
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

device_csr fill_device_table(gpu_state& gpu, query_layout& layout, const segment_filler& fill,
                             bool self_pairs, join_stats& stats) {
  stopwatch clock;
  cudaStream_t compute = gpu.slots[0]->stream.get();
  auto storage = std::make_shared<device_table_storage>();
  const std::uint64_t ids = layout.total + (self_pairs ? layout.queries : 0);
  storage->neighbors.reserve(std::max<std::uint64_t>(ids, 1));
  cuda_event kernel_start, filled;
  kernel_start.record(compute);
  const std::uint32_t threads = std::max(layout.positions, layout.queries);
  if (self_pairs && threads > 0) {
    open_self_slots_kernel<<<grid_size(threads, block), block, 0, compute>>>(
        layout.offsets.data(), layout.ids, layout.positions, layout.queries,
        layout.row_offset.data(), storage->neighbors.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  if (layout.total > 0) {
    fill(0, row_segment{0, layout.positions, 0, ids}, storage->neighbors.data(),
         layout.row_offset.data(), compute);
  }
  filled.record(compute);
  if (self_pairs) {
    shift_for_self_slots_kernel<<<grid_size(layout.queries + 1, block), block, 0, compute>>>(
        layout.offsets.data(), layout.queries + 1);
    EPSJOIN_CHECK_LAUNCH();
  }
  // The caller reads the table from other streams (its own): it must be complete on return.
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(compute));
  storage->offsets = std::move(layout.offsets);
  device_csr table;
  table.offsets = storage->offsets.data();
  table.neighbors = storage->neighbors.data();
  table.n_queries = layout.queries;
  table.n_pairs = ids;
  table.device = gpu.device;
  table.owner = std::move(storage);
  stats.add_stage("fill", clock.seconds());
  stats.notes.push_back({"fill kernels seconds", concat(filled.since(kernel_start) * 1e-3)});
  stats.notes.push_back({"segments", concat("1 of ", ids, " ids, laid out in query order and left "
                                            "on the device")});
  return table;
}

std::future<void> reserve_row_ring(gpu_state& gpu, std::size_t queries,
                                   const memory_budget& budget) {
  const std::uint64_t chunk_ids = ring_chunk_ids(budget);
  if (2 * (std::uint64_t{queries} + 1) < chunk_ids) return {};
  return reserve_ring(gpu, chunk_ids);
}

void run_query_rows(gpu_state& gpu, query_layout& layout, const segment_filler& fill,
                    delivery& out, bool self_pairs, const memory_budget& budget, join_stats& stats,
                    const std::function<void(double)>& progress) {
  stopwatch clock;
  cudaStream_t compute = gpu.slots[0]->stream.get();
  cudaStream_t copy = gpu.slots[1]->stream.get();
  const std::uint64_t total = layout.total;
  const unsigned threads = out.threads();
  const bool blocks = out.takes_row_blocks();

  // With self pairs the sink's rows each have a slot before them. Where the device has room for
  // one id a query beside the table, the fill writes those slots too (each holding its query's
  // id) and the sink leaves them to us, so the copy out is the first write to the host table.
  // Either way the fill is queued now and runs while the host lays the sink's rows out.
  const bool self_slots =
      self_pairs && !blocks &&
      segment_capacity(total + layout.queries, budget) >= total + layout.queries &&
      out.take_self_slots();
  const std::uint64_t table_ids = total + (self_slots ? layout.queries : 0);
  device_buffer<std::uint32_t> table;
  table.reserve(std::max<std::uint64_t>(table_ids, 1));
  cuda_event kernel_start, filled;
  kernel_start.record(compute);
  if (self_slots && std::max(layout.positions, layout.queries) > 0) {
    open_self_slots_kernel<<<grid_size(std::max(layout.positions, layout.queries), block), block, 0,
                             compute>>>(layout.offsets.data(), layout.ids, layout.positions,
                                        layout.queries, layout.row_offset.data(), table.data());
    EPSJOIN_CHECK_LAUNCH();
  }
  if (total > 0) {
    fill(0, row_segment{0, layout.positions, 0, table_ids}, table.data(), layout.row_offset.data(),
         compute);
  }
  filled.record(compute);

  const std::uint64_t chunk_ids = ring_chunk_ids(budget);
  auto& ring = gpu.row_chunks;
  const std::uint64_t offset_ids = 2 * (std::uint64_t{layout.queries} + 1);
  for (auto& r : ring) r.reserve(std::max<std::uint64_t>(std::min(chunk_ids, std::max(table_ids, offset_ids)), 1));
  const std::uint64_t ring_ids = std::min<std::uint64_t>(ring[0].capacity(), chunk_ids);

  // The layout to the host through the pinned ring, every thread copying out (and so faulting
  // in the host array), then the counts the sink lays out.
  host_offsets offsets(std::size_t{layout.queries} + 1);
  copy_bytes_through_ring(ring, ring_ids * sizeof(std::uint32_t), layout.offsets.data(),
                          offsets.data(), sizeof(std::uint64_t) * offsets.size(), copy, threads);
  id_vector counts(layout.queries);
  parallel_for(threads, counts.size(), std::size_t{1} << 18, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t q = b; q < e; ++q) counts[q] = static_cast<std::uint32_t>(offsets[q + 1] - offsets[q]);
  });
  stats.add_stage("upload", clock.seconds());

  clock.restart();
  if (blocks) {
    out.begin_row_blocks(counts);
  } else {
    out.lay_out_query_rows(counts, offsets);
  }
  stats.add_stage("rows", clock.seconds());
  const bool runs_with_self = self_slots && out.one_slot_before_rows();

  // The chunks: runs of the table of at most a ring slot; for a sink that takes row blocks, cut
  // at the last row end within the slot (a row longer than a slot spans several chunks).
  std::vector<std::uint64_t> cut{0};
  while (cut.back() < table_ids) {
    std::uint64_t end = std::min(table_ids, cut.back() + ring_ids);
    if (blocks && end < total) {
      const std::uint64_t row_end = *(std::upper_bound(offsets.begin(), offsets.end(), end) - 1);
      if (row_end > cut.back()) end = row_end;
    }
    cut.push_back(end);
  }
  const std::size_t chunks = cut.size() - 1;
  // Row blocks: the rows from next_query that end at or before `end`.
  std::size_t next_query = 0;
  auto deliver = [&](std::span<const std::uint32_t> ids, std::uint64_t end) {
    const std::size_t last =
        end == total ? layout.queries
                     : static_cast<std::size_t>(std::upper_bound(offsets.begin() + next_query,
                                                                 offsets.end(), end) -
                                                offsets.begin()) - 1;
    out.row_block(next_query, {offsets.data() + next_query, last - next_query + 1}, ids);
    next_query = last;
  };
  std::vector<std::uint32_t> carry;  // a row longer than a chunk, gathered until it ends
  const ring_times times = copy_through_ring(
      ring, copy, chunks,
      [&](std::size_t g, std::uint32_t* slot) {
        EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(copy, filled.get(), 0));
        EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot, table.data() + cut[g],
                                         sizeof(std::uint32_t) * (cut[g + 1] - cut[g]),
                                         cudaMemcpyDeviceToHost, copy));
      },
      [&](std::size_t g, const std::uint32_t* slot) {
        const std::span<const std::uint32_t> piece(slot,
                                                   static_cast<std::size_t>(cut[g + 1] - cut[g]));
        if (runs_with_self) {
          out.query_run(cut[g], piece);
        } else if (self_slots) {
          out.query_rows_with_self_slots(cut[g], piece);
        } else if (!blocks) {
          out.query_rows(cut[g], piece);
        } else {
          const bool row_ends = cut[g + 1] == total ||
                                std::binary_search(offsets.begin(), offsets.end(), cut[g + 1]);
          if (row_ends && carry.empty()) {
            deliver(piece, cut[g + 1]);
          } else {
            carry.insert(carry.end(), piece.begin(), piece.end());
            if (row_ends) {
              deliver(carry, cut[g + 1]);
              carry.clear();
            }
          }
        }
        if (progress) progress(static_cast<double>(cut[g + 1]) / static_cast<double>(table_ids));
      });
  // Trailing empty rows (or every row of an empty table).
  if (blocks && next_query < layout.queries) {
    out.row_block(next_query, {offsets.data() + next_query, layout.queries - next_query + 1}, {});
  }
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(compute));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(copy));
  stats.add_stage("fill+copy wait", times.waiting);
  stats.add_stage("assembly", times.placing);
  stats.notes.push_back({"fill kernels seconds", concat(filled.since(kernel_start) * 1e-3)});
  stats.notes.push_back({"segments", concat("1 of ", total, " ids, laid out in query order on the "
                                            "device; ", chunks, " pinned chunks of up to ",
                                            ring_ids, " ids",
                                            blocks           ? ", handed over as row blocks"
                                            : runs_with_self ? ", self pairs filled on the device"
                                            : self_slots     ? ", self pairs filled on the device, "
                                                               "rows placed one by one"
                                                             : "")});
}

}  // namespace epsjoin::detail
