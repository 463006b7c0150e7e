#pragma once
// The pipeline every row-filling GPU engine shares (lbjoin, gds-join, ted-join): plan the grid,
// build the device index and the work items, count every query's neighbours, lay the rows out,
// then fill them segment by segment (batch/rows.cuh). Engines differ only in their kernels,
// which they hand over as a row_join_kernel.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "batch/rows.cuh"
#include "core/engine.hpp"
#include "core/params.hpp"
#include "gpu/lbjoin/kernels.cuh"
#include "gpu/lbjoin/launch.cuh"
#include "hetero/cpu_share.hpp"

namespace epsjoin::detail::lbjoin {

enum class fill_mode { automatic, records, second_pass };

struct row_join_settings {
  bool sort = true;          ///< work items heaviest first (SORTBYWL)
  bool queue = false;        ///< persistent warps take items from an atomic counter (WORKQUEUE)
  bool lid_unicomp = false;  ///< each distance once, both rows written
  fill_mode fill = fill_mode::automatic;
  int index_dims = 8;  ///< most indexed dimensions; 0 = one cell (brute force)
  row_plan_options rows;
  std::string summary;  ///< the engine's configuration, for the stats notes
};

/// The switches every row-join engine takes: sort, queue, pattern, fill, index_dims (1-8; with
/// `brute_force_mode`, also mode=indexed|brute-force), segment_ids and chunk_ids. The summary
/// names sort, queue and pattern; engines append their own.
row_join_settings read_row_join_settings(const param_map& params, bool brute_force_mode);

/// The keys read_row_join_settings reads.
std::vector<std::string_view> row_join_param_keys(bool brute_force_mode);

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

enum class row_join_result {
  done,
  /// hegjoin under LID-UNICOMP only: the GPU's rows need more than one device segment, which a
  /// halving fill cannot write; nothing reached the sink, run again with the FULL pattern.
  needs_full_pattern,
};

/// Runs the join of `req` with `kernel`, delivering rows (or counts) to req.sink. With `cpu`
/// (hegjoin), the GPU counts only the batches `cpu` hands it while the CPU workers join the rest;
/// the settings must leave the work queue off. Under the FULL pattern the GPU fills only its own
/// rows; under LID-UNICOMP (self-joins) each side writes both rows of the pairs it computed, and
/// a row holds the GPU's part, then the CPU's. Without `cpu` the result is always `done`.
template <class T>
row_join_result run_row_join(join_request& req, const row_join_settings& settings,
                             row_join_kernel<T>& kernel, hetero::cpu_share<T>* cpu = nullptr);

}  // namespace epsjoin::detail::lbjoin
