#pragma once
// hegjoin's CPU side: the rows of deque items computed on the cores, against the same grid index
// the GPU uses (its host copy), so the two sides share one preprocessing and one candidate set.
// A work item is the GPU's: up to a warp's worth of query positions of one cell.
//
// Under LID-UNICOMP (self-joins) an item's ranges are its cell's forward neighbours and, last,
// the rest of its own cell: each pair is computed once, by whichever side takes the item of its
// owner, and that side writes both rows. So a row may have a GPU part and a CPU part.

#include <cstdint>
#include <span>
#include <vector>

namespace epsjoin::detail::hetero {

/// Same layout as lbjoin::work_item: `count` query positions from `first`, all in cell `cell`.
struct host_item {
  std::uint32_t first;
  std::uint32_t count;
  std::uint32_t cell;
};

/// Data positions [begin, end) of the index.
struct host_range {
  std::uint32_t begin, end;
};

/// Host copies of what the GPU kernels read (lbjoin::join_view), plus the items.
template <class T>
struct host_join_view {
  std::span<const host_item> items;          ///< workload order, heaviest first
  std::span<const T> query_points;           ///< [queries x d] position order
  std::span<const std::uint32_t> query_ids;  ///< query position -> caller's id
  std::span<const T> data_points;            ///< [data x d] index order
  std::span<const std::uint32_t> data_ids;   ///< data position -> caller's id
  /// Per item: its cell's candidate ranges (under halving, the last one is the item's own cell
  /// from its first query's successor on); set only for the items the CPU may take (split_join
  /// fetches them from the device as the CPU's end of the deque grows).
  std::span<const host_range* const> item_ranges;
  std::span<const std::uint32_t> item_range_count;
  int d = 0;
  T eps2 = 0;
  bool self_join = false;  ///< queries and data are one index: skip a position's own point
  bool halving = false;    ///< LID-UNICOMP (self-joins only): each pair once, both rows written
  /// Halving: per position, the reverse hits the CPU found so far (incremented atomically).
  std::uint32_t* reverse_counts = nullptr;
};

/// Rows found by one CPU worker, appended item after item.
struct cpu_rows {
  std::vector<std::uint32_t> positions;  ///< query positions, one per row
  std::vector<std::uint32_t> counts;     ///< neighbours in each row
  std::vector<std::uint32_t> neighbors;  ///< the rows' data positions, concatenated
  std::uint64_t candidates = 0;          ///< the items' candidates (the deque's measure of work)
  std::uint64_t distances = 0;           ///< super-ego side: the distances it computed
  void clear() {
    positions.clear();
    counts.clear();
    neighbors.clear();
    candidates = 0;
    distances = 0;
  }
};

/// Keeps, in place and in order, the data positions of found[0, m) within eps of query position
/// `pos`, decided with the arithmetic join_items_on_cpu (and the GPU's tiled kernel) uses;
/// returns how many were kept.
template <class T>
std::size_t keep_within_on_cpu(const host_join_view<T>& view, std::uint32_t pos,
                               std::uint32_t* found, std::size_t m);

/// Appends the rows of view.items[first, end) to `out`.
template <class T>
void join_items_on_cpu(const host_join_view<T>& view, std::uint32_t first, std::uint32_t end,
                       cpu_rows& out);

}  // namespace epsjoin::detail::hetero
