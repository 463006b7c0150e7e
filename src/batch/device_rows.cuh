#pragma once
// The row pipeline's device-only delivery (core/device_rows.hpp): each segment is filled on the
// device and handed, where it lies, to a device_row_consumer; no row crosses the link.

#include <cstdint>
#include <functional>
#include <span>

#include "batch/rows.cuh"
#include "core/device_rows.hpp"

namespace epsjoin::detail {

/// Fills the segments one after another into one device buffer, each handed to `consumer`
/// before the next is filled; `ids` (device) maps query positions to caller ids.
void run_device_row_segments(gpu_state& gpu, const row_counts& rc,
                             std::span<const row_segment> segments, const std::uint32_t* ids,
                             const segment_filler& fill, device_row_consumer& consumer,
                             join_stats& stats, const std::function<void(double)>& progress);

}  // namespace epsjoin::detail
