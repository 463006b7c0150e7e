#pragma once
// The eps-grid index on the host: the arrays B, G, A, M of paper 001 sec. 3.3, non-empty cells
// only, O(N) memory whatever the grid's extent.
//
//   cell_ids     B  [cells]      linear ids of the non-empty cells, strictly increasing
//   cell_begin   G  [cells + 1]  points of cell c are positions [cell_begin[c], cell_begin[c+1])
//   permutation  A  [n]          position -> id of the point in the input
//   points          [n x d]      float64 copy of the points in position order, columns in
//                                plan.dim_order (cells contiguous in memory)
//   masks        M  [k][...]     per indexed dimension, the sorted coordinates of non-empty cells
//
// Within a cell, points keep their input order (the sort is stable), so the index is a pure
// function of the input and the geometry: the GPU build (CUB radix sort of the same ids) yields
// the same arrays.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "grid/geometry.hpp"

namespace epsjoin::detail {
class memory_budget;
}

namespace epsjoin::detail::grid {

struct build_timings {
  double ids = 0, sort = 0, cells = 0, gather = 0, masks = 0;
};

struct host_index {
  geometry geo;
  std::vector<int> dim_order;            ///< column order of `points` (see grid_plan)
  std::vector<std::uint64_t> cell_ids;   ///< B
  std::vector<std::uint32_t> cell_begin; ///< G
  std::vector<std::uint32_t> permutation;  ///< A
  std::vector<double> points;            ///< cell-ordered copy, columns in dim_order
  std::vector<std::vector<std::uint32_t>> masks;  ///< M, one per indexed dimension
  /// The same masks as bitmaps over the cell coordinates, for the dimensions whose cell count is
  /// at most 64 times the number of non-empty cells (O(N) memory; empty otherwise).
  std::vector<std::vector<std::uint64_t>> mask_bits;
  /// Points of the input outside the grid (only for an index of query points built with another
  /// set's geometry); they are in no cell and not in `permutation`.
  std::size_t outside = 0;

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  std::size_t n_cells() const noexcept { return cell_ids.size(); }
  std::size_t n_points() const noexcept { return permutation.size(); }
  std::size_t d() const noexcept { return dim_order.size(); }
  std::uint32_t cell_size(std::size_t c) const noexcept { return cell_begin[c + 1] - cell_begin[c]; }
  const double* point(std::size_t position) const noexcept { return points.data() + position * d(); }
  void cell_coords(std::size_t c, std::uint32_t* coords) const noexcept {
    coords_of(geo, cell_ids[c], coords);
  }

  /// Index of the cell with linear id `id`, or npos (binary search over all cells).
  std::size_t find(std::uint64_t id) const noexcept { return find_in(id, 0, n_cells()); }
  /// Same, searching cells [lo, hi) only.
  std::size_t find_in(std::uint64_t id, std::size_t lo, std::size_t hi) const noexcept;
  /// First cell in [lo, hi) whose id is >= id (hi when none).
  std::size_t lower_bound(std::uint64_t id, std::size_t lo, std::size_t hi) const noexcept;

  /// Whether coordinate `c` of indexed dimension j has a non-empty cell.
  bool mask_has(int j, std::uint32_t c) const noexcept;
  /// The neighbour box of a cell narrowed by the masks: an end of the box whose whole slab of
  /// cells is empty is dropped (paper 001 sec. 3.4, O_j intersected with M_j).
  cell_box masked_box(const std::uint32_t* own) const noexcept;
};

struct build_options {
  unsigned threads = 1;
  bool copy_points = true;  ///< fill `points` (engines with their own layout may skip it)
  bool masks = true;        ///< fill `masks`
  /// Charged with the sort's keys and ids while they live (sort_bytes), when given.
  memory_budget* budget = nullptr;
};

/// Host bytes the build's sort of `n` points holds at once: cell ids and point ids with their
/// radix sort's scratch (32-bit ids below 2^32 cells, else 64-bit).
inline std::uint64_t sort_bytes(std::uint64_t n, const geometry& geo) {
  const std::uint64_t key = geo.total_cells < (std::uint64_t{1} << 32) ? 4 : 8;
  return n * (2 * key + 2 * sizeof(std::uint32_t));
}

/// Builds the index of `data` for geometry `geo` (planned for `data`, or for another set when
/// `data` holds query points: those outside the grid are then counted in `outside` and left out).
/// `dim_order` is the column order of the point copy (all d columns).
host_index build_host_index(dataset_view data, const geometry& geo, std::span<const int> dim_order,
                            const build_options& options, build_timings* timings = nullptr);

/// Stable parallel LSD radix sort of (keys, values) by the low `key_bits` bits of the keys.
/// `threads` workers; the scratch vectors are resized as needed.
void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values,
                      int key_bits, unsigned threads);

}  // namespace epsjoin::detail::grid
