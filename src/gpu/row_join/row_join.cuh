#pragma once
// The pipeline every row-filling GPU engine shares (lbjoin, gds-join, ted-join, meta-16q,
// meta-1q, and hegjoin's GPU side): plan the grid, build the device index and the work items,
// count every query's neighbours, lay the rows out, then fill them segment by segment
// (batch/rows.cuh). An engine plugs in its kernels (a row_join_kernel) and, optionally, a
// work_source that decides which items this device counts (all of them by default; hegjoin's
// deque shares them with the CPU). Nothing here knows an engine or hegjoin.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "batch/rows.cuh"
#include "core/engine.hpp"
#include "gpu/agents/kernel_contract.cuh"
#include "grid/device_index.cuh"

namespace epsjoin::detail::row_join {

enum class fill_mode { automatic, records, second_pass };

/// The switches every row-join engine takes; each engine's params struct embeds one.
struct row_join_params {
  bool sort = true;          ///< work items heaviest first (SORTBYWL)
  bool queue = false;        ///< persistent warps take items from an atomic counter (WORKQUEUE)
  bool lid_unicomp = false;  ///< each distance once, both rows written
  fill_mode fill = fill_mode::automatic;
  int index_dims = 8;  ///< most indexed dimensions; 0 = one cell (brute force)
  std::string summary;  ///< the engine's configuration, for the stats notes
};

/// Declares and reads sort, queue, pattern, fill, index_dims (1-8; with `brute_force_mode`,
/// also mode=indexed|brute-force) and accepts the memory budget's overrides segment_ids and
/// chunk_ids (read by dispatch, base/memory_budget.hpp). Without `takes_queue` (hegjoin, whose
/// batches on two streams cannot share one queue counter) the queue switch is not a key. The
/// summary names sort, queue and pattern; engines append their own.
row_join_params read_row_join_params(param_reader& reader, bool brute_force_mode,
                                     bool takes_queue = true);

/// What the index leaves to compare, for kernels that choose their method by it.
struct index_summary {
  bool one_cell = false;         ///< nothing indexed: every query's candidates are all the data
  std::uint64_t candidates = 0;  ///< distances the index leaves (halving: each pair once)
  std::uint64_t all_pairs = 0;   ///< distances without an index, counted the same way
  /// The point copies' columns: place c holds input column dim_order[c] (grid_plan::dim_order).
  std::vector<int> dim_order;
};

/// An engine's kernels, as the pipeline calls them.
template <class T>
class row_join_kernel {
 public:
  virtual ~row_join_kernel() = default;
  /// Queries per work item: 32 for the warp-per-item kernels, 1 for the per-query ones.
  virtual unsigned item_queries() const = 0;
  /// Lanes per query for the workload estimate (0: the tiled kernel's choice).
  virtual unsigned workload_lanes() const = 0;
  /// Whether the kernel's distance loop exits early, so the point copies should hold the widest
  /// dimensions first. Without an index and without it, the plan skips its pass over the data.
  virtual bool orders_dimensions() const { return true; }
  /// Whether the counting pass can record its hits (row_output::records).
  virtual bool can_record() const = 0;
  /// Whether a launch may be given any subset of the items. False for the kernels that compare
  /// the whole span of query positions the items cover with every point (the GEMM kernels):
  /// they are given contiguous runs of the position order. Known once prepare() has run.
  virtual bool takes_any_items() const { return true; }
  /// Called once the index is built, before any launch.
  virtual void prepare(gpu_state& /*gpu*/, cudaStream_t /*stream*/, const join_view<T>& /*view*/,
                       std::uint32_t /*n_queries*/, std::uint32_t /*n_data*/,
                       const index_summary& /*index*/) {}
  /// One pass over `items` (config carries the pattern and the queue).
  virtual void launch(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
                      const row_output& out, pass p, const launch_config& config,
                      cudaStream_t stream) = 0;
  /// Called after the counting pass, with the pairs it found (self pairs not included).
  virtual void report(join_stats& /*stats*/, std::uint64_t /*pairs*/) {}
};

/// Counts one batch of items on a stream.
using count_launcher = std::function<void(const work_item* items, std::uint32_t n, cudaStream_t)>;

/// What the counting pass hands a work source: the index, the items in the pipeline's order,
/// the caller's rows (for a source that joins some items elsewhere) and a launcher that counts
/// a batch of items on the device.
template <class T>
struct count_context {
  gpu_state& gpu;
  const grid::device_index<T>& queries;
  const grid::device_index<T>& data;
  const neighbor_ranges& ranges;
  const work_item* items;  ///< device, workload order (position order with sort=off)
  std::uint32_t n_items;
  const work_item* position_items;  ///< device, the same items in position order
  bool takes_any_items;             ///< the kernel's takes_any_items()
  const join_view<T>& view;
  bool halving;  ///< LID-UNICOMP ranges of a self-join
  dataset_view query_rows, data_rows;
  std::span<const int> dim_order;  ///< the point copies' column order
  unsigned threads;                ///< host threads the source may use
  const count_launcher& count;
  join_stats& stats;
};

/// Decides which work items the device counts and delivers what was found elsewhere. The
/// default source gives the device every item. A source whose device share is not every item
/// must give it a prefix of the workload order, so the device can fill its rows alone.
template <class T>
class work_source {
 public:
  virtual ~work_source() = default;
  /// Whether the kernels may take their items from a work queue (one launch over every item).
  virtual bool allows_queue() const { return true; }
  /// The counting pass: counts the device's items through ctx.count; returns the seconds the
  /// device's count kernels were busy.
  virtual double count(const count_context<T>& ctx);
  /// Notes on the split, after the counting pass.
  virtual void report(join_stats& /*stats*/) const {}
  /// Items [0, device_items(n)) of the workload order were the device's.
  virtual std::uint32_t device_items(std::uint32_t n_items) const { return n_items; }
  /// Whether any pair was found elsewhere: if not, the rows are the device's alone.
  virtual bool found_elsewhere() const { return false; }
  /// Neighbours found elsewhere per query position (after the device's own in each row).
  virtual std::vector<std::uint32_t> counts_elsewhere(std::uint32_t positions) const {
    return std::vector<std::uint32_t>(positions, 0);
  }
  /// The device's fill items when it took only a prefix of several segments' items: grouped by
  /// segment (workload order kept within each); item_begin[k] is where segment k's start.
  virtual std::vector<work_item> device_fill_items(std::span<const row_segment> segments,
                                                   std::vector<std::uint32_t>& item_begin) const;
  /// Delivers the pairs found elsewhere: in the rows form into the laid-out rows, row p after
  /// its first device_counts[p] places; in the pairs form as pairs.
  virtual void deliver_elsewhere(const delivery& /*out*/,
                                 std::span<const std::uint32_t> /*device_counts*/,
                                 unsigned /*threads*/) {}
};

enum class row_join_result {
  done,
  /// A source that found pairs elsewhere under LID-UNICOMP only: the device's rows need more
  /// than one device segment, which a halving fill cannot write; nothing reached the sink, run
  /// again with the FULL pattern.
  needs_full_pattern,
};

/// Runs the join of `req` with `kernel`, delivering rows (or counts) to req.sink. `source`
/// (default: every item on the device) decides which items the device counts; a source other
/// than the default needs the work queue off. Under the FULL pattern the device fills only its
/// own rows; under LID-UNICOMP (self-joins) each side writes both rows of the pairs it computed,
/// and a row holds the device's part, then the rest. With the default source the result is
/// always `done`.
template <class T>
row_join_result run_row_join(join_request& req, const row_join_params& settings,
                             row_join_kernel<T>& kernel, work_source<T>* source = nullptr);

}  // namespace epsjoin::detail::row_join
