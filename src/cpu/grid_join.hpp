#pragma once
// cpu-grid's join in two halves: the indexed side (B's grid at a radius, its cell-ordered copy
// in the precision of the computation) built once, and the join of a request against it. The
// engine builds a side per join; an eps_index (cpu/eps_index.cpp) keeps one and joins many
// requests against it. A side built at radius r serves every eps <= r: its cells are at least r
// wide, so the adjacent cells still hold every neighbour, and the kernels compare against the
// request's own eps.

#include <string>
#include <vector>

#include "core/engine.hpp"
#include "cpu/grid_points.hpp"
#include "cpu/grid_schedule.hpp"
#include "grid/host_index.hpp"
#include "grid/plan.hpp"

namespace epsjoin::detail::cpu {

/// cpu-grid's parameters (read in cpu_grid.cpp, where each is described).
struct cpu_grid_params final : engine_params {
  grid::access_pattern pattern = grid::access_pattern::lid_unicomp;
  lookup_method lookup = lookup_method::rows;
  bool masks = false;  // measured: in dense data they rarely narrow the box and cost a lookup per dim
  int max_k = 6;
  bool reorder = true;
  // Measured (bench/RESULTS-grid.md): with SIMD across dimensions, checking the partial sum
  // costs more than it saves on uniform and exponential data up to d = 64.
  int early_exit = 0;
  enum class layout_kind { automatic, columns, rows } layout = layout_kind::automatic;
  bool avx2 = true;  // use the AVX2 kernels when the CPU has them
  unsigned gather_min_spans = 2;
  // A self-join's CSR rows: filled under the count's halved pattern, each pair found once and
  // written to both rows, or under FULL, each row by its own query's task; auto: halved for
  // tables up to halved_fill_max_bytes.
  enum class fill_kind { automatic, halved, full } fill = fill_kind::automatic;
};

/// The budget a side is built within (cpu-grid's join; an eps_index accounts for its own).
struct side_budget {
  memory_budget* budget = nullptr;
  /// Held throughout, charged already (the points given).
  std::vector<host_need> held;
  /// What the join then holds beside the side and its result at its peak (the counts, the row
  /// cursors, the query side): checked with the side's own needs before any is allocated, and
  /// charged by the join as it makes them.
  std::vector<host_need> after;
  /// False for a count of the pairs (no result delivered), which the planners fit to any limit
  /// by recomputing instead of storing: its memory is then counted in the budget, not refused.
  bool bounded = true;
};

/// The indexed side of a join: what a build at one radius costs and every join against it reuses.
template <class T>
struct grid_side {
  grid::grid_plan plan;
  grid::host_index index;     ///< no float64 point copy: `block` is the engine's layout
  point_block<T> block;       ///< the points in cell order, columns in plan.dim_order
  std::vector<double> center; ///< per input column; float32 copies are taken about it
  grid::column_stats stats;   ///< of the indexed points
  grid::build_timings timings;
  double eps = 0;             ///< the radius the grid was planned for
  /// The indexed points as given: read again only by float32's float64 re-checks (an eps_index
  /// of float64 leaves `data` null, as nothing reads it then).
  dataset_view input;
  /// The index and the block in the budget they were built within (side_budget), while alive.
  std::vector<host_charge> charges;
};

/// Plans B's grid at radius `eps` from its column statistics and builds the side. With a
/// budget, the path's peak (the side's sort, or the side with `budget->after`) is required of it
/// before the sort and again once the cells are known, and the side's memory is charged to it.
template <class T>
grid_side<T> build_grid_side(dataset_view data, grid::column_stats stats, double eps,
                             const cpu_grid_params& params, unsigned threads,
                             const side_budget* budget = nullptr);

/// What a join against a side built for `data` holds beside the side and its result at its
/// peak, by the form it delivers (the `after` of side_budget).
template <class T>
std::vector<host_need> join_needs(const join_request& req, const cpu_grid_params& params,
                                  bool by_column);
/// Whether cpu-grid keeps B's points by column (else by row).
bool grid_by_column(std::size_t d, const cpu_grid_params& params);

/// Joins `req` (its options.eps at most side.eps; req.data, or req.queries in a self-join, the
/// points the side was built from) against `side`, delivering to req.sink, and adds its stages
/// and notes to `stats`.
template <class T, distance_metric M = distance_metric::euclidean>
void join_against_side(join_request& req, const cpu_grid_params& params, const grid_side<T>& side,
                       join_stats& stats);

/// Whether float32 copies of points with these column statistics, centred on `center`, are
/// finite.
bool fits_float(const grid::column_stats& stats, const std::vector<double>& center);

/// The centre cpu-grid takes float32 copies about: the midpoint of each column's range.
std::vector<double> column_centers(const grid::column_stats& stats);

}  // namespace epsjoin::detail::cpu
