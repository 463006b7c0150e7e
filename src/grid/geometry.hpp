#pragma once
// Cell geometry of the eps-grid, shared by the host index and the GPU engines (compiled by the
// host compiler and by nvcc): plain structs and functions only, no std:: containers, no
// exceptions, no virtual calls.
//
// The grid covers k <= d "indexed" dimensions of the points. In indexed dimension j a point
// with coordinate x lies in cell coordinate floor((x - origin[j]) * inv_side[j]) (inv_side the
// double nearest 1 / side: a multiplication, not a division, and the same bits on every IEEE
// processor) and the cells of one point set are numbered row-major:
//   linear id = sum_j coord[j] * stride[j],  stride[k-1] = 1,  stride[j] = stride[j+1] * cells[j+1].
// side[j] >= eps, so two points within eps of each other are in cells whose coordinates differ by
// at most 1 in every indexed dimension (their 3^k neighbourhood). The other d - k dimensions are
// not indexed; they still count in the distance.
//
// How the geometry is chosen (k, which dimensions, side) is the host planner's job
// (grid/plan.hpp); this file only computes with a chosen geometry, so the CPU and GPU indexes
// built from one geometry are identical bit for bit.

#include <cstdint>

#include "base/host_device.hpp"

namespace epsjoin::detail::grid {

/// Capacity of the per-dimension arrays of `geometry` (the planner's hard limit on k).
inline constexpr int max_indexed_dims = 8;
/// Cells per indexed dimension never exceed this, so a cell coordinate and coordinate +/- 1 fit in
/// an int32 on either processor. A dimension that would need more cells gets wider ones.
inline constexpr std::uint32_t max_cells_per_dim = std::uint32_t{1} << 30;
/// The product of the cell counts stays at or below this: linear ids, and an id plus or minus a
/// stride, never wrap a uint64.
inline constexpr std::uint64_t max_total_cells = std::uint64_t{1} << 62;

/// Which neighbour cells a query cell examines.
enum class access_pattern : std::uint8_t {
  full,         ///< all 3^k neighbours including the own cell; every ordered pair found once
  unicomp,      ///< paper 001 sec. 4.2: each unordered pair of adjacent cells examined once
  lid_unicomp,  ///< dissertation sec. 3.3.2: only neighbours with a larger linear id
};

struct geometry {
  int k = 0;  ///< indexed dimensions (0: one cell holds everything)
  int d = 0;  ///< dimensions of the points
  double eps = 0;
  int dim[max_indexed_dims] = {};  ///< input column read by each indexed dimension
  double origin[max_indexed_dims] = {};  ///< lower corner of cell coordinate 0
  double side[max_indexed_dims] = {};    ///< cell side, >= eps
  double inv_side[max_indexed_dims] = {};  ///< 1 / side rounded to nearest: what cell_coord uses
  std::uint32_t cells[max_indexed_dims] = {};   ///< cells in the dimension, >= 1
  std::uint64_t stride[max_indexed_dims] = {};  ///< row-major strides of the linear id
  std::uint64_t total_cells = 1;                ///< product of cells (<= max_total_cells)
};

/// Cell coordinate of x in indexed dimension j: -1 below the grid, cells[j] above it. Points of
/// the set the geometry was planned for always fall inside; query points of an A x B join may not
/// (and then have no neighbour in the grid).
EPSJOIN_HD inline std::int64_t cell_coord(const geometry& g, int j, double x) {
  // Two IEEE operations with no room for contraction into an FMA: same bits on CPU and GPU.
  const double f = (x - g.origin[j]) * g.inv_side[j];
  if (!(f >= 0.0)) return -1;
  if (f >= static_cast<double>(g.cells[j])) return static_cast<std::int64_t>(g.cells[j]);
  // 0 <= f < cells: truncation is floor (and no libm call where the ISA lacks a rounding op).
  return static_cast<std::int64_t>(f);
}

/// Cell coordinates of one point (a row of all d input columns); false when it is outside the grid.
template <class T>
EPSJOIN_HD inline bool point_coords(const geometry& g, const T* row, std::uint32_t* coords) {
  for (int j = 0; j < g.k; ++j) {
    const std::int64_t c = cell_coord(g, j, static_cast<double>(row[g.dim[j]]));
    if (c < 0 || c >= static_cast<std::int64_t>(g.cells[j])) return false;
    coords[j] = static_cast<std::uint32_t>(c);
  }
  return true;
}

EPSJOIN_HD inline std::uint64_t linear_id(const geometry& g, const std::uint32_t* coords) {
  std::uint64_t id = 0;
  for (int j = 0; j < g.k; ++j) id += coords[j] * g.stride[j];
  return id;
}

EPSJOIN_HD inline void coords_of(const geometry& g, std::uint64_t id, std::uint32_t* coords) {
  for (int j = 0; j < g.k; ++j) {
    coords[j] = static_cast<std::uint32_t>(id / g.stride[j]);
    id -= coords[j] * g.stride[j];
  }
}

/// Linear id of a point's cell, or `g.total_cells` (an id no cell has) when it is outside.
template <class T>
EPSJOIN_HD inline std::uint64_t point_cell_id(const geometry& g, const T* row) {
  std::uint32_t coords[max_indexed_dims];
  return point_coords(g, row, coords) ? linear_id(g, coords) : g.total_cells;
}

/// The box of neighbour coordinates of a cell: [lo[j], hi[j]] per dimension, own coordinate +/- 1
/// clipped to the grid. Callers may narrow it further (the index's per-dimension masks).
struct cell_box {
  std::uint32_t lo[max_indexed_dims];
  std::uint32_t hi[max_indexed_dims];
};

EPSJOIN_HD inline cell_box neighbor_box(const geometry& g, const std::uint32_t* own) {
  cell_box b{};
  for (int j = 0; j < g.k; ++j) {
    b.lo[j] = own[j] > 0 ? own[j] - 1 : 0;
    b.hi[j] = own[j] + 1 < g.cells[j] ? own[j] + 1 : own[j];
  }
  return b;
}

/// Whether a cell with coordinates `own` examines its neighbour at `offset` (each in {-1, 0, 1})
/// under `pattern`. The own cell (offset 0) counts only for `full`: the halving patterns pair the
/// points of one cell with each other separately, each unordered pair once.
///   lid_unicomp: the neighbour's linear id is larger, i.e. the first non-zero offset is +1.
///   unicomp: with j the last dimension where the offset is non-zero, own[j] is odd. Of two
///     adjacent cells, j is the last dimension where they differ, they agree after it, and exactly
///     one of them is odd in j: that one examines the other, the other never does.
EPSJOIN_HD inline bool visits(access_pattern pattern, int k, const std::uint32_t* own,
                              const int* offset) {
  int last = -1, first = -1;
  for (int j = 0; j < k; ++j) {
    if (offset[j] != 0) {
      if (first < 0) first = j;
      last = j;
    }
  }
  if (pattern == access_pattern::full) return true;
  if (last < 0) return false;
  if (pattern == access_pattern::lid_unicomp) return offset[first] > 0;
  return (own[last] & 1u) != 0;
}

/// One row of neighbour cells: the cells at offsets -1, 0, +1 in the last indexed dimension,
/// which have consecutive linear ids, so an index sorted by id holds the non-empty ones next to
/// each other. `mask` bit b is set when the cell at last-dimension offset b - 1 is examined.
struct neighbor_row {
  std::uint64_t center_id;  ///< id of the row's cell at last-dimension offset 0
  unsigned mask;            ///< bits 0, 1, 2: offsets -1, 0, +1 (already clipped to the box)
  /// Which of the 3^(k-1) rows: sum over prefix dimensions j of (offset[j] + 1) 3^(k-2-j). For one
  /// row index, center_id - own id is the same for every cell, so a caller visiting cells in
  /// increasing id order sees each row's ids increase (and may keep a cursor per row).
  unsigned row;
};

/// Calls f(neighbor_row) for every row of the box (with k = 0, the own cell's row: center bit only
/// for `full`) that has at least one examined cell. Rows come in increasing id order.
template <class F>
EPSJOIN_HD inline void for_each_neighbor_row(const geometry& g, const std::uint32_t* own,
                                             const cell_box& box, access_pattern pattern, F&& f) {
  if (g.k == 0) {
    if (pattern == access_pattern::full) f(neighbor_row{0, 2u, 0u});
    return;
  }
  const int k = g.k;
  const int last = k - 1;
  int offset[max_indexed_dims];
  unsigned place[max_indexed_dims];  // 3^(k-2-j): weight of prefix dimension j in the row index
  std::uint64_t id = 0;  // id of (prefix coordinates, own[last])
  unsigned row = 0;
  for (int j = last - 1, w = 1; j >= 0; --j, w *= 3) place[j] = static_cast<unsigned>(w);
  for (int j = 0; j < last; ++j) {
    offset[j] = static_cast<int>(box.lo[j]) - static_cast<int>(own[j]);
    id += box.lo[j] * g.stride[j];
    row += static_cast<unsigned>(offset[j] + 1) * place[j];
  }
  id += own[last];
  // Offsets of the last dimension that the box keeps.
  unsigned in_box = 2u;
  if (box.lo[last] < own[last]) in_box |= 1u;
  if (box.hi[last] > own[last]) in_box |= 4u;
  for (;;) {
    // visits() for the row's three cells at once, from the prefix's first and last non-zero
    // offsets (the unit tests check this against visits()).
    int first_nz = -1, last_nz = -1;
    for (int j = 0; j < last; ++j) {
      if (offset[j] != 0) {
        if (first_nz < 0) first_nz = j;
        last_nz = j;
      }
    }
    unsigned mask;
    if (pattern == access_pattern::full) {
      mask = in_box;
    } else if (pattern == access_pattern::lid_unicomp) {
      // First non-zero offset +1: a positive prefix takes the row, a zero prefix only its +1.
      mask = first_nz < 0 ? (in_box & 4u) : offset[first_nz] > 0 ? in_box : 0u;
    } else {
      // Last non-zero offset in an odd coordinate: the last dimension for offsets -1 and +1,
      // the prefix's last non-zero dimension for offset 0.
      mask = ((own[last] & 1u) ? (in_box & 5u) : 0u) |
             ((last_nz >= 0 && (own[last_nz] & 1u)) ? (in_box & 2u) : 0u);
    }
    if (mask != 0) f(neighbor_row{id, mask, row});
    // Odometer over the prefix dimensions 0 .. k-2, last of them fastest (increasing ids).
    int j = last - 1;
    for (; j >= 0; --j) {
      if (own[j] + offset[j] < box.hi[j]) {
        ++offset[j];
        id += g.stride[j];
        row += place[j];
        break;
      }
      const int reset = static_cast<int>(box.lo[j]) - static_cast<int>(own[j]);
      id -= static_cast<std::uint64_t>(offset[j] - reset) * g.stride[j];
      row -= static_cast<unsigned>(offset[j] - reset) * place[j];
      offset[j] = reset;
    }
    if (j < 0) return;
  }
}

/// Calls f(neighbor_id) for every examined neighbour cell in increasing id order (empty or not).
template <class F>
EPSJOIN_HD inline void for_each_neighbor(const geometry& g, const std::uint32_t* own,
                                         const cell_box& box, access_pattern pattern, F&& f) {
  for_each_neighbor_row(g, own, box, pattern, [&](const neighbor_row& row) {
    for (unsigned b = 0; b < 3; ++b) {
      if (row.mask & (1u << b)) f(row.center_id + b - 1);
    }
  });
}

}  // namespace epsjoin::detail::grid
