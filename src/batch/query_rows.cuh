#pragma once
// The row pipeline's fast path (rows.cuh has the general one), taken when the whole table fits in
// device memory: the rows are laid out on the device in the caller's query order (the counting
// pass's per-position counts scattered by query and scanned there, each position's row start
// gathered back), filled by one launch, and copied out in chunks that are runs of the sink's
// table, placed by every host thread while the link brings the next chunks. No per-position
// array crosses the link and no row is permuted on the host.

#include <cstdint>
#include <functional>
#include <future>
#include <vector>

#include "batch/rows.cuh"
#include "epsjoin/result.hpp"

namespace epsjoin::detail {

/// Rows laid out in query order on the device.
struct query_layout {
  std::uint32_t queries = 0;
  std::uint32_t positions = 0;
  const std::uint32_t* ids = nullptr;               ///< device [positions] position -> query id
  std::uint64_t total = 0;                          ///< ids in the whole table
  device_buffer<std::uint64_t> offsets;             ///< [queries + 1] where query q's row starts
  device_buffer<std::uint64_t> row_offset;          ///< [positions] where position p's row starts
};

/// Lays the rows of `queries` queries out from the counting pass's per-position `counts` and the
/// position -> query id map `ids` (distinct ids in [0, queries); an A x B join's query index may
/// leave out queries that cannot have neighbours, whose rows are then empty); waits for the
/// total.
query_layout lay_out_by_query(gpu_state& gpu, const std::uint32_t* counts, const std::uint32_t* ids,
                              std::uint32_t positions, std::uint32_t queries, cudaStream_t stream);

/// Fills the whole table (`fill`'s segment is every position) and delivers it through `out`'s
/// query-row form. The fill runs on gpu.slots[0]'s stream, after what is queued there. With
/// `self_pairs` (a self-join whose sink adds each query to its own row) the self slots are
/// filled on the device where the sink's rows allow it, so the copy out is one run.
void run_query_rows(gpu_state& gpu, query_layout& layout, const segment_filler& fill,
                    delivery& out, bool self_pairs, const memory_budget& budget, join_stats& stats,
                    const std::function<void(double)>& progress);

/// Reserves the pinned ring the rows cross the link through (gpu.row_chunks), on a thread of its
/// own, where a table of `queries` rows fills it whatever its pairs (its offsets alone fill a
/// chunk); otherwise returns no future. Called as the index is built, so the first pinning (0.1 s
/// of a process's first table of 50M rows on an H200) overlaps the index and the counts. The
/// future must be waited for before any rows are delivered.
std::future<void> reserve_row_ring(gpu_state& gpu, std::size_t queries,
                                   const memory_budget& budget);

/// Fills the whole table into device memory that the returned table owns, and leaves it there
/// (for a sink that takes a device table): nothing crosses the link. With `self_pairs` each row
/// starts with its query's own id, as a sink adding self pairs would have it.
device_csr fill_device_table(gpu_state& gpu, query_layout& layout, const segment_filler& fill,
                             bool self_pairs, join_stats& stats);

}  // namespace epsjoin::detail
