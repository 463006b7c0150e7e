#pragma once
// The grid DBSCAN clusters on in a few dimensions (dbscan_cells.hpp): cells of side just under
// eps/sqrt(d), so that every two points of one cell are within eps of each other, and each
// cell's neighbour cells, those that may hold a point within eps of one of its points.
//
// Exactness does not rest on the cell arithmetic. Each cell keeps the bounding box of its
// points, and the box tests below are computed as the oracle computes a distance (a sum over
// dimensions in order of squared differences, in float64): rounding is monotone, so a box's
// nearest (farthest) corner never computes farther (nearer) than any point in it. A cell whose
// own box is not within eps is refused (the grid is not built), and the neighbour cells are
// enumerated with a slack that covers the rounding of the cell coordinates, which the extent
// limit below keeps under 1e-8 of a cell.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail {

/// Up to this many dimensions: 5^3 neighbour cells at most (the stencil grows as 5^d).
inline constexpr std::size_t cell_max_dims = 3;

struct cell_grid {
  std::size_t d = 0;
  double eps2 = 0;
  /// [n] point ids in cell order; ascending within a cell.
  std::unique_ptr<std::uint32_t[]> order;
  /// [n x d] the points in cell order, as float64 (the input's values, exactly).
  std::unique_ptr<double[]> xs;
  /// [cells + 1] cell c holds positions [start[c], start[c + 1]).
  std::vector<std::uint32_t> start;
  /// [cells] linear cell ids, ascending.
  std::vector<std::uint64_t> key;
  /// [cells x 2d] each cell's bounding box: d lower corner values, then d upper.
  std::unique_ptr<double[]> box;
  std::array<std::uint64_t, cell_max_dims> extent{}, stride{};
  /// Neighbour cells, as rows along the last dimension: the offsets of the other dimensions
  /// and how far the row reaches each way along the last; nearest rows first, so that a count
  /// that stops at min_samples stops sooner.
  struct stencil_row {
    std::array<std::int64_t, cell_max_dims> offset{};
    std::int64_t reach = 0;
    /// The other dimensions' offsets are all 0 / lexicographically >= 0.
    bool middle = false, forward = false;
  };
  std::vector<stencil_row> stencil;

  std::size_t cells() const noexcept { return key.size(); }
  std::size_t size(std::size_t c) const noexcept { return start[c + 1] - start[c]; }
  const double* point(std::size_t pos) const noexcept { return xs.get() + pos * d; }
  const double* lower(std::size_t c) const noexcept { return box.get() + c * 2 * d; }
  const double* upper(std::size_t c) const noexcept { return box.get() + c * 2 * d + d; }

  /// Cells [begin, end) of one row of a stencil.
  struct cell_range {
    std::uint32_t begin, end;
  };
  /// Sets `out` to the non-empty rows of `c`'s stencil (c itself included), the nearest rows
  /// first, or with `forward` only the cells after c (each pair of neighbouring cells seen
  /// once); `cursor` ([stencil.size()], zero before the first call) carries each row's search
  /// position between calls for increasing c, which makes a sweep over the cells linear.
  void neighbours(std::size_t c, std::span<std::size_t> cursor, std::vector<cell_range>& out,
                  bool forward = false) const;
};

/// Builds the grid of `points` on `threads`, or nullopt where it does not suit them: d above
/// cell_max_dims, eps^2 or the data's extent not finite, more than 2^24 cells along a
/// dimension, or a cell whose points are not all within eps (rounding; never seen). Throws
/// invalid_argument for a coordinate that is not finite.
std::optional<cell_grid> build_cell_grid(dataset_view points, double eps, unsigned threads);

/// The oracle's test: the sum over dimensions, in order, of (a - b)^2 is <= eps^2.
inline bool within_squared(const double* a, const double* b, std::size_t d, double eps2) noexcept {
  double s = 0;
  for (std::size_t k = 0; k < d; ++k) {
    const double diff = a[k] - b[k];
    s += diff * diff;
  }
  return s <= eps2;
}

/// Smallest and largest squared distance, computed as `within_squared` computes it, between any
/// points of the boxes [lo_a, hi_a] and [lo_b, hi_b]; and (below) from a point `p` to a box.
inline double nearest2(const double* lo_a, const double* hi_a, const double* lo_b,
                       const double* hi_b, std::size_t d) noexcept {
  double s = 0;
  for (std::size_t k = 0; k < d; ++k) {
    const double diff = std::max(std::max(lo_b[k] - hi_a[k], lo_a[k] - hi_b[k]), 0.0);
    s += diff * diff;
  }
  return s;
}

inline double farthest2(const double* lo_a, const double* hi_a, const double* lo_b,
                        const double* hi_b, std::size_t d) noexcept {
  double s = 0;
  for (std::size_t k = 0; k < d; ++k) {
    const double diff = std::max(hi_b[k] - lo_a[k], hi_a[k] - lo_b[k]);
    s += diff * diff;
  }
  return s;
}

// A point is the box [p, p]: the box-to-box expressions give the point's values exactly (no
// rounding differs: the same differences are taken).
inline double nearest2(const double* p, const double* lo, const double* hi,
                       std::size_t d) noexcept {
  return nearest2(p, p, lo, hi, d);
}

inline double farthest2(const double* p, const double* lo, const double* hi,
                        std::size_t d) noexcept {
  return farthest2(p, p, lo, hi, d);
}

}  // namespace epsjoin::detail
