#pragma once
// The row pipeline of engines that count before they fill (lbjoin): from per-position neighbour
// counts on the device to the sink. Rows are laid out on the device in position order and cut
// into segments that fit device memory; each segment is filled by one kernel launch, copied out
// in chunks through a ring of pinned buffers and placed in the sink's rows (or expanded into
// pairs for sinks that take pairs) by the host threads, while the GPU fills the next segment.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/gpu_state.cuh"
#include "base/memory_budget.hpp"
#include "core/delivery.hpp"
#include "epsjoin/sink.hpp"
#include "epsjoin/stats.hpp"

namespace epsjoin::detail {

/// One segment: query positions [first, end), layout elements [begin, begin + size).
struct row_segment {
  std::uint32_t first = 0, end = 0;
  std::uint64_t begin = 0, size = 0;
};

/// Fills `segment` into `neighbors` (device, room for segment.size ids) on `stream`; row p goes
/// to neighbors + row_offset[p] - segment.begin.
using segment_filler = std::function<void(std::size_t index, const row_segment& segment,
                                          std::uint32_t* neighbors,
                                          const std::uint64_t* row_offset, cudaStream_t stream)>;

struct row_counts {
  std::vector<std::uint32_t> counts;     ///< [positions] neighbours per query position
  std::vector<std::uint32_t> ids;        ///< [positions] position -> caller's query id
  std::vector<std::uint64_t> offsets;    ///< [positions + 1] the layout
};

/// Copies the counting pass's results to the host and lays the rows out.
row_counts fetch_row_counts(const std::uint32_t* device_counts, const std::uint32_t* device_ids,
                            std::uint32_t positions, cudaStream_t stream);

/// The counting pass's sums, made on the device for a sink that keeps only the number of pairs
/// (`delivery::total_only_below`): of every position, and of the positions whose query id is
/// below `below` (`device_ids` null: position p is query p). Nothing of size `positions` reaches
/// the host.
struct count_totals {
  std::uint64_t all = 0;
  std::uint64_t below = 0;
};
count_totals sum_row_counts(const std::uint32_t* device_counts, const std::uint32_t* device_ids,
                            std::uint32_t positions, std::size_t below, cudaStream_t stream);

/// Segments of at most `capacity` ids, cut only at `cut_points` (ascending positions, the
/// first 0); a piece between two cut points larger than `capacity` becomes its own segment.
std::vector<row_segment> plan_segments(const row_counts& rc, std::span<const std::uint32_t> cut_points,
                                       std::uint64_t capacity);

/// Ids per device segment that the budget allows now (two segments are in use at once), or the
/// budget's segment_ids override.
std::uint64_t segment_capacity(std::uint64_t total_ids, const memory_budget& budget);

/// Rows the device does not fill (hegjoin's CPU share): their counts by query position, added
/// to the layout handed to a row sink, and where the sink put them.
struct rows_beside {
  std::span<const std::uint32_t> counts;
  row_destination destination;
};

/// Runs the segments and delivers every row through `out` (rows or pairs form). With `beside`,
/// a row sink's table also holds room for those rows; the caller writes them to
/// beside->destination.
void run_row_segments(gpu_state& gpu, const row_counts& rc, std::span<const row_segment> segments,
                      std::size_t n_queries, const segment_filler& fill, delivery& out,
                      const memory_budget& budget, join_stats& stats,
                      const std::function<void(double)>& progress, rows_beside* beside = nullptr);

}  // namespace epsjoin::detail
