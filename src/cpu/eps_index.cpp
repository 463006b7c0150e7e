// eps_index (include/epsjoin/index.hpp): cpu-grid's indexed side (cpu/grid_join.hpp) built once
// at max_eps and joined with many requests. The build is the engine's own; a query is what
// dispatch does around an engine (validate, count what is delivered, add the self pairs) and the
// engine's join against a side it did not have to build.
//
// What the index keeps, so that the caller's points may go once it is built: the grid and the
// cell-ordered copy of the points (the side), plus the points as given where something reads
// them again: float32's float64 re-checks (euclidean) and the metric re-check of cosine and
// haversine (whose grid holds unit vectors). A float64 side reads nothing else, so its input
// view is left without data: a read there would fault, not return stale points.

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <variant>

#include "base/expects.hpp"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/progress.hpp"
#include "base/timer.hpp"
#include "core/counting_sink.hpp"
#include "core/engine.hpp"
#include "core/metric_join.hpp"
#include "core/point_checks.hpp"
#include "cpu/eps_index_state.hpp"

namespace epsjoin::detail {

void check_radius(double eps, scalar_type precision, const char* name) {
  EPSJOIN_EXPECTS(std::isfinite(eps) && eps > 0, name, " must be a finite number > 0, got ", eps);
  // As a join: eps^2 must be finite in the arithmetic of the computation.
  const bool f32 = precision == scalar_type::f32;
  const double largest = std::sqrt(f32 ? static_cast<double>(std::numeric_limits<float>::max())
                                       : std::numeric_limits<double>::max());
  EPSJOIN_EXPECTS(eps <= largest, name, " must be at most ", largest, " in ", f32 ? "f32" : "f64",
                  " arithmetic (its square must be finite), got ", eps);
}

void check_points(dataset_view v, const char* what, unsigned threads) {
  check_points_shape(v, what);
  EPSJOIN_EXPECTS(v.n == 0 || !v.on_device(), what, " lies in device memory; an eps_index is ",
                  "built and queried on the host (copy the points to the host first)");
  check_host_points_finite(v, what, threads);
}

namespace {

dataset copy_of(dataset_view v) {
  dataset out(v.n, v.d, v.type);
  if (v.n > 0) {
    std::memcpy(
        v.type == scalar_type::f64 ? static_cast<void*>(out.f64()) : static_cast<void*>(out.f32()),
        v.data, v.n * v.d * size_of(v.type));
  }
  return out;
}

// The grids of the index, coarse to fine: max_eps's, then (index_options::finer_grids) grids
// of half the radius each while their non-empty cells hold at least min_cell_occupancy points
// on average. Finer grids past that cost more cell visits than they save distances
// (docs/index.md).
template <class T>
void build_levels(eps_index_state& s, dataset_view grid_points, const grid::column_stats& stats,
                  const memory_budget& budget, std::uint64_t level_bytes, unsigned threads) {
  for (unsigned level = 0; level <= s.options.finer_grids; ++level) {
    const double eps = std::ldexp(s.max_eps, -static_cast<int>(level));
    join_options at = s.metric;
    at.eps = eps;
    const double radius = joins_unit_vectors(s.options.metric)
                              ? unit_vector_radius(at, s.d, eps_index_engine_band)
                              : eps;
    if (level > 0) budget.require_host(level_bytes, "a finer grid of the eps_index");
    cpu::grid_side<T> side =
        cpu::build_grid_side<T>(grid_points, stats, radius, grid_params(s), threads);
    const double occupancy = static_cast<double>(s.n) /
                             static_cast<double>(std::max<std::size_t>(1, side.index.n_cells()));
    if (level > 0 && occupancy < min_cell_occupancy) break;
    if (s.precision == scalar_type::f64 && !joins_unit_vectors(s.options.metric)) {
      side.input.data = nullptr;  // nothing reads it (see the top of this file)
    }
    s.bytes += side.index.cell_ids.size() * sizeof(std::uint64_t) +
               side.index.cell_begin.size() * sizeof(std::uint32_t) +
               side.index.permutation.size() * sizeof(std::uint32_t) +
               side.block.stride * (side.block.by_column ? side.block.d : side.block.n) * sizeof(T);
    if (level == 0) {
      s.build.notes.emplace_back("grid", side.plan.reason);
      s.build.notes.emplace_back("non-empty cells", std::to_string(side.index.n_cells()));
    } else {
      s.build.notes.emplace_back(concat("finer grid ", level),
                                 concat("eps ", eps, ": ", side.index.n_cells(),
                                        " non-empty cells, ", occupancy, " points a cell"));
    }
    s.levels.emplace_back(std::move(side));
  }
}

}  // namespace

}  // namespace epsjoin::detail

namespace epsjoin {

using detail::concat;

eps_index::eps_index(resources& res, dataset_view data, double max_eps,
                     const index_options& options)
    : state_(std::make_unique<detail::eps_index_state>()) {
  detail::stopwatch clock;
  detail::eps_index_state& s = *state_;
  const unsigned threads = std::max(1u, res.threads());
  detail::check_radius(max_eps, options.precision, "max_eps");
  detail::check_points(data, "the indexed points", threads);
  s.options = options;
  s.metric.eps = max_eps;
  s.metric.metric = options.metric;
  s.metric.angles = options.angles;
  s.metric.sphere_radius = options.sphere_radius;
  s.metric.precision = options.precision;
  s.metric.params = options.params;
  detail::validate_metric_options(s.metric, data.d);
  detail::validate_metric_points(s.metric, data, "the indexed points");
  const detail::engine* grid_engine = detail::find_engine("cpu-grid");
  EPSJOIN_ENSURE(grid_engine != nullptr, error, "internal: cpu-grid is not registered");
  s.params = grid_engine->parse_params(options.params);
  s.max_eps = max_eps;
  s.n = data.n;
  s.d = data.d;
  const bool units = detail::joins_unit_vectors(options.metric);
  const bool native_norm =
      options.metric == distance_metric::manhattan || options.metric == distance_metric::chebyshev;
  s.precision = native_norm ? scalar_type::f64 : options.precision;
  s.grid_eps =
      units ? detail::unit_vector_radius(s.metric, data.d, detail::eps_index_engine_band) : max_eps;
  s.build.self_join = false;
  s.build.n_data = data.n;
  s.build.d = data.d;
  s.build.eps = max_eps;
  s.build.precision = s.precision;
  s.build.threads = threads;
  s.build.engine = "cpu-grid";
  if (native_norm && options.precision == scalar_type::f32) {
    s.build.notes.emplace_back(
        "precision", concat("float64: ", to_string(options.metric), " is computed in float64"));
  }
  if (data.n == 0) {
    s.build.seconds = clock.seconds();
    return;
  }

  // What the index will hold, refused before any of it is allocated: the points as given (where
  // kept), unit vectors, and per point its id, cell id and copy in the computation's precision.
  const std::size_t grid_d = units && options.metric == distance_metric::haversine ? 3 : data.d;
  const bool keep_points = units || s.precision == scalar_type::f32;
  const std::uint64_t planned =
      data.n * ((keep_points ? data.d * size_of(data.type) : 0) + (units ? grid_d * 8 : 0) + 4 + 8 +
                grid_d * size_of(s.precision));
  detail::budget_of(res, options).require_host(planned, "the eps_index");
  EPSJOIN_EXPECTS(options.finer_grids <= detail::max_finer_grids, "finer_grids must be at most ",
                  detail::max_finer_grids, ", got ", options.finer_grids);

  if (keep_points) {
    s.points = detail::copy_of(data);
    s.bytes += data.n * data.d * size_of(data.type);
  }
  dataset_view grid_points = keep_points ? s.points.view() : data;
  if (units) {
    s.units = detail::unit_vectors(s.metric, data, threads);
    s.bytes += s.units.n() * s.units.d() * sizeof(double);
    grid_points = s.units.view();
    s.build.notes.emplace_back("unit-vector radius", concat(s.grid_eps));
  }
  detail::grid::column_stats stats = detail::grid::compute_column_stats(grid_points, threads);
  if (s.precision == scalar_type::f32 &&
      !detail::cpu::fits_float(stats, detail::cpu::column_centers(stats))) {
    s.precision = scalar_type::f64;
    s.build.precision = s.precision;
    s.build.notes.emplace_back("precision", "float64: coordinates exceed the float32 range");
  }
  const std::uint64_t level_bytes = data.n * (4 + 8 + grid_d * size_of(s.precision));
  const detail::memory_budget budget = detail::budget_of(res, options);
  if (s.precision == scalar_type::f32) {
    detail::build_levels<float>(s, grid_points, stats, budget, level_bytes, threads);
  } else {
    detail::build_levels<double>(s, grid_points, stats, budget, level_bytes, threads);
    if (keep_points && !units) {  // kept for float32's re-checks, which float64 does not make
      s.bytes -= data.n * data.d * size_of(data.type);
      s.points = dataset();
    }
  }
  s.build.add_stage("index", clock.seconds());
  s.build.seconds = clock.seconds();
}

eps_index::~eps_index() = default;
eps_index::eps_index(eps_index&&) noexcept = default;
eps_index& eps_index::operator=(eps_index&&) noexcept = default;

double eps_index::max_eps() const noexcept { return state_->max_eps; }
std::size_t eps_index::n() const noexcept { return state_->n; }
std::size_t eps_index::d() const noexcept { return state_->d; }
const index_options& eps_index::options() const noexcept { return state_->options; }
scalar_type eps_index::precision() const noexcept { return state_->precision; }
std::uint64_t eps_index::memory_bytes() const noexcept { return state_->bytes; }
const join_stats& eps_index::build_stats() const noexcept { return state_->build; }

}  // namespace epsjoin
