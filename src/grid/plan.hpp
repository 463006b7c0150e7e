#pragma once
// The host-side planner of the eps-grid: which dimensions are indexed, cell sides and counts.
//
// How k (the number of indexed dimensions) is chosen, in order:
//  1. Candidate dimensions are the input columns, by decreasing variance when `reorder` is set
//     (ties keep column order), otherwise in column order.
//  2. A candidate is skipped when indexing it cannot pay: its points span less than
//     `min_span_cells` cells (with a span of 3 cells or fewer every cell is a neighbour of every
//     other, so the dimension prunes nothing and only triples the neighbour probes), or its
//     extent is not finite.
//  3. A candidate is skipped when the product of cell counts would pass max_total_cells (2^62):
//     linear ids are uint64 and must not wrap, even plus or minus a stride.
//  4. Candidates are taken until k reaches `max_k` (default 6, at most max_indexed_dims = 8): a
//     cell has 3^k - 1 neighbours to probe, 728 at k = 6 and 6560 at k = 8, and in the sparse
//     grids of higher dimensions most probes find an empty cell.
// The cell side is eps widened by a relative margin that covers the rounding of
// (x - origin) / side (see cell_side()), and wider still where a dimension would need more than
// max_cells_per_dim cells. A grid with k = 0 is legal: one cell holds every point.

#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "grid/geometry.hpp"

namespace epsjoin::detail::grid {

struct plan_options {
  double eps = 0;
  int max_k = 6;              ///< at most max_indexed_dims
  bool reorder = true;        ///< candidates by decreasing variance (else column order)
  double min_span_cells = 4;  ///< a dimension is indexed only if its points span this many cells
};

/// Per-column summary of a point set.
struct column_stats {
  std::vector<double> min, max, variance;
};

/// min, max and variance of every column, computed with `threads` threads.
column_stats compute_column_stats(dataset_view data, unsigned threads);

struct grid_plan {
  geometry geo;
  /// All d input columns: the indexed ones first (in index order), then the others by
  /// decreasing variance (column order when not reordering). Engines lay out their point copies
  /// in this order, so a distance loop that exits early sees the widest dimensions first.
  std::vector<int> dim_order;
  /// Why k is what it is, one line for the stats notes.
  std::string reason;
};

/// The cell side used for a dimension of `extent` (max - min) at radius eps.
double cell_side(double eps, double extent);

/// Chooses the geometry from column statistics alone (no data needed; see the rules above).
grid_plan plan_grid(const column_stats& stats, const plan_options& options);

/// compute_column_stats + plan_grid.
grid_plan plan_grid(dataset_view data, const plan_options& options, unsigned threads);

}  // namespace epsjoin::detail::grid
