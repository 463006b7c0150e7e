#pragma once
// What an eps_index holds (cpu/eps_index.cpp builds it, cpu/eps_index_query.cpp queries it),
// and the checks the two share.

#include <memory>
#include <variant>
#include <vector>

#include "base/expects.hpp"
#include "base/memory_budget.hpp"
#include "core/engine.hpp"
#include "cpu/grid_join.hpp"
#include "epsjoin/index.hpp"

namespace epsjoin::detail {

struct eps_index_state {
  index_options options;
  join_options metric;  // options' metric, angles, sphere radius and params, for the metric code
  double max_eps = 0;
  double grid_eps = 0;  // max_eps, or the unit-vector radius at max_eps
  std::size_t n = 0, d = 0;
  scalar_type precision = scalar_type::f64;
  std::unique_ptr<const engine_params> params;
  dataset points;  // the points as given, where something reads them again (eps_index.cpp)
  dataset units;   // cosine and haversine: the unit vectors the grid holds
  /// The grids, coarse to fine (cpu/eps_index.cpp, build_levels); empty for no points.
  std::vector<std::variant<cpu::grid_side<float>, cpu::grid_side<double>>> levels;
  join_stats build;
  std::uint64_t bytes = 0;
};

inline constexpr double eps_index_engine_band = 1e-12;  // cpu-grid's (engine::error_band)
/// A finer grid is kept only while its non-empty cells hold this many points on average
/// (measured, docs/index.md: below it a query visits more cells than the distances it saves).
inline constexpr double min_cell_occupancy = 8;
inline constexpr unsigned max_finer_grids = 8;

/// Throws invalid_argument unless `eps` is finite, > 0 and has a finite square in `precision`.
void check_radius(double eps, scalar_type precision, const char* name);
/// Throws invalid_argument for points a join would refuse: too many, d = 0, no data, in device
/// memory, or a coordinate that is not finite (named).
void check_points(dataset_view v, const char* what, unsigned threads);

inline memory_budget budget_of(const resources& res, const index_options& o) {
  return memory_budget(res.memory(), read_memory_overrides(o.params));
}

inline const cpu::cpu_grid_params& grid_params(const eps_index_state& s) {
  const auto* p = dynamic_cast<const cpu::cpu_grid_params*>(s.params.get());
  EPSJOIN_ENSURE(p != nullptr, error, "internal: an eps_index without cpu-grid's parameters");
  return *p;
}

}  // namespace epsjoin::detail
