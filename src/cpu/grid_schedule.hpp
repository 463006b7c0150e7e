#pragma once
// cpu-grid's plan: for every query cell, the point ranges of the data cells it examines, its
// workload (distances to compute), and the tasks in decreasing order of workload.

#include <cstdint>
#include <span>
#include <vector>

#include "grid/geometry.hpp"
#include "grid/host_index.hpp"

namespace epsjoin::detail::cpu {

/// Positions [begin, end) of the data index; cells adjacent in the index merge into one range.
struct point_range {
  std::uint32_t begin, end;
};

/// How neighbour cells are looked up (measured in bench/grid_lookup).
enum class lookup_method : std::uint8_t {
  binary,  ///< one binary search over all cells per neighbour cell
  rows,    ///< one search per row of 3 cells, bounded by the id distance to the own cell
  tree,    ///< descend the coordinate prefixes: cells sharing one are contiguous in the index,
           ///< so a prefix with no cell ends its whole branch (for sparse grids, large k)
};

/// Appends to `out` the ranges of the non-empty data cells that a query cell with coordinates
/// `own` and id `own_id` examines under `pattern`; `near` is the data index's lower_bound of
/// own_id (the own cell's index in a self-join). Returns the number of points in them.
///
/// `cursors` (rows method only; may be null): 3^(k-1) positions, all `no_cursor` at first, kept
/// between calls for query cells taken in increasing id order. Each row's ids then only grow,
/// so its search starts where the previous cell's ended and usually ends a step or two later.
std::uint64_t neighbor_ranges(const grid::host_index& data, const std::uint32_t* own,
                              std::uint64_t own_id, std::size_t near, grid::access_pattern pattern,
                              lookup_method method, bool use_masks, std::vector<point_range>& out,
                              std::size_t* cursors = nullptr);
inline constexpr std::size_t no_cursor = static_cast<std::size_t>(-1);
/// Number of cursors neighbor_ranges needs for a grid of k indexed dimensions.
inline std::size_t cursor_count(int k) {
  std::size_t n = 1;
  for (int j = 1; j < k; ++j) n *= 3;
  return n;
}

/// Queries in one task at most: bounds the per-candidate counters of a task (int32 in float32).
inline constexpr std::uint32_t max_task_queries = std::uint32_t{1} << 20;

/// One unit of work: the queries at positions [q_begin, q_end) of one query cell.
struct grid_task {
  std::uint32_t cell;
  std::uint32_t q_begin, q_end;
  std::uint64_t work;  ///< distances it computes
};

struct plan_settings {
  grid::access_pattern pattern = grid::access_pattern::lid_unicomp;
  bool halved = true;  ///< self-join with unicomp / lid_unicomp: own cell as a triangle
  lookup_method lookup = lookup_method::rows;
  bool use_masks = true;
  unsigned threads = 1;
  /// Stored neighbour ranges may take up to this many bytes (the memory budget's host scratch);
  /// cells beyond it look theirs up again when they run.
  std::size_t range_budget_bytes = std::size_t{1} << 30;
  /// Keep only tasks share_index, share_index + share_count, ... of the whole join's (a process's
  /// share of a join that several run whole: join_options::share). The whole join's tasks are
  /// then cut as for share_threads threads, whatever `threads` is, so that every process builds
  /// the same tasks.
  unsigned share_index = 0, share_count = 1;
};
inline constexpr unsigned share_threads = 64;

struct grid_schedule {
  std::vector<grid_task> tasks;  ///< in decreasing order of work
  /// [chunk_begin[i], chunk_begin[i + 1]) is the i-th hand-out of tasks to a thread.
  std::vector<std::uint32_t> chunk_begin;
  std::uint64_t total_work = 0;  ///< of the tasks kept
  /// The whole join's tasks and work, of which these are a share (plan_settings::share_count).
  std::uint64_t all_tasks = 0, all_work = 0;
  /// Per query cell: its ranges in stored[cell / cells_per_block] from `first`, or count ==
  /// not_stored when they did not fit the budget.
  static constexpr std::uint32_t not_stored = ~std::uint32_t{0};
  static constexpr std::size_t cells_per_block = 256;
  std::vector<std::vector<point_range>> stored;
  std::vector<std::uint32_t> first, count;
  std::uint64_t stored_ranges = 0;
  std::uint64_t lookups_rows = 0;  // rows probed while planning

  /// Host bytes it holds (what a join charges the memory budget for it).
  std::uint64_t bytes() const noexcept {
    std::uint64_t b = tasks.capacity() * sizeof(grid_task) +
                      (chunk_begin.capacity() + first.capacity() + count.capacity()) *
                          sizeof(std::uint32_t) +
                      stored.capacity() * sizeof(std::vector<point_range>);
    for (const auto& block : stored) b += block.capacity() * sizeof(point_range);
    return b;
  }

  /// The ranges of query cell c, from storage or looked up into `scratch`.
  std::span<const point_range> ranges(std::size_t c, const grid::host_index& queries,
                                      const grid::host_index& data, const plan_settings& s,
                                      std::vector<point_range>& scratch) const;
};

/// Plans a join of the cells of `queries` against `data` (the same object for a self-join).
grid_schedule plan_schedule(const grid::host_index& queries, const grid::host_index& data,
                            const plan_settings& settings);

}  // namespace epsjoin::detail::cpu
