#pragma once
// The row pipeline's device-only delivery (core/device_rows.hpp): the rows are laid out on the
// device in position order, each segment is filled there and handed, where it lies, to a
// device_row_consumer; no row crosses the link.

#include <cstdint>
#include <functional>
#include <span>

#include "batch/rows.cuh"
#include "core/device_rows.hpp"

namespace epsjoin::detail {

/// Rows in position order on the device: row p starts at row_offset[p]; row_offset[positions]
/// is the total.
struct device_row_layout {
  device_buffer<std::uint64_t> row_offset;  ///< [positions + 1]
  std::uint64_t total = 0;
};

/// Lays out the counting pass's per-position `counts` on the device; waits for the total.
device_row_layout lay_out_on_device(gpu_state& gpu, const std::uint32_t* counts,
                                    std::uint32_t positions, cudaStream_t stream);

/// Fills the segments (of `layout`, cut anywhere) one after another into one device buffer,
/// each handed to `consumer` before the next is filled; `ids` (device) maps query positions to
/// caller ids.
void run_device_row_segments(gpu_state& gpu, const device_row_layout& layout,
                             std::span<const row_segment> segments, const std::uint32_t* ids,
                             const segment_filler& fill, device_row_consumer& consumer,
                             join_stats& stats, const std::function<void(double)>& progress);

}  // namespace epsjoin::detail
