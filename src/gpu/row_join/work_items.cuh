#pragma once
// The row join's work items: the query positions of each cell cut into items of up to `chunk`
// queries, each with its workload (the warp steps it costs), optionally ordered from the
// heaviest down (SORTBYWL), within each segment of a segmented run.

#include <cstdint>
#include <span>
#include <vector>

#include "base/gpu_state.cuh"
#include "gpu/agents/kernel_contract.cuh"
#include "grid/neighbor_ranges.cuh"

namespace epsjoin::detail::row_join {

struct work_list {
  device_buffer<work_item> items;            ///< position order
  device_buffer<std::uint32_t> workload;     ///< per item
  std::vector<std::uint32_t> host_first;     ///< per item, its first position (host copy)
  std::uint32_t n = 0;
};

/// Items of up to `chunk` queries of one cell each (chunk 32: tiled; 1: one query per item).
/// `lanes` > 0 fixes the lanes per query for the workload; 0 means the tiled kernel's choice.
work_list build_items(gpu_state& gpu, cudaStream_t stream, const std::uint32_t* cell_begin,
                      std::uint32_t n_cells, const neighbor_ranges& ranges, bool halving,
                      unsigned chunk, unsigned lanes);

/// The items ordered by segment (segments are position ranges starting at `segment_first`,
/// ascending; empty = one segment) and, when `by_workload`, heaviest first within each. Only
/// for an order the list does not already have (by workload, or several segments).
device_buffer<work_item> order_items(gpu_state& gpu, cudaStream_t stream, const work_list& list,
                                     std::span<const std::uint32_t> segment_first, bool by_workload);

/// Items first, first + step, first + 2 step, ... of `items` (n of them), in that order: one
/// device's share when several count one join (core/engine.hpp, work_share). Taken from the
/// workload order, every share holds a like mix of heavy and light items.
device_buffer<work_item> take_share(const work_item* items, std::uint32_t n, std::uint32_t first,
                                    std::uint32_t step, std::uint32_t& n_taken,
                                    cudaStream_t stream);

/// Fills rows from the counting pass's records: record (p, id) goes to the next free place of row
/// p, at neighbors + row_offset[p] - segment_begin + cursor[p]++ (cursor zeroed by the caller).
void scatter_records(const index_pair* records, std::uint64_t n, const std::uint64_t* row_offset,
                     std::uint64_t segment_begin, std::uint32_t* cursor, std::uint32_t* neighbors,
                     cudaStream_t stream);

}  // namespace epsjoin::detail::row_join
