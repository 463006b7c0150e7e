// eps_index's queries: what dispatch does around an engine (validate, count what is delivered,
// add the self pairs), then cpu-grid's join against the side the index keeps.

#include <algorithm>
#include <atomic>
#include <variant>
#include <vector>

#include "base/cancellation.hpp"
#include "base/progress.hpp"
#include "base/timer.hpp"
#include "core/counting_sink.hpp"
#include "core/metric_join.hpp"
#include "core/point_checks.hpp"
#include "cpu/eps_index_few.hpp"
#include "cpu/eps_index_state.hpp"

namespace epsjoin::detail {

namespace {

// The radius the grid of a query at eps must have: eps, or (cosine, haversine) the unit-vector
// radius, at most the coarsest grid's (it grows with eps, and that grid was built at max_eps).
double grid_radius(const eps_index_state& s, double eps) {
  if (!joins_unit_vectors(s.options.metric)) return eps;
  join_options at = s.metric;
  at.eps = eps;
  return std::min(unit_vector_radius(at, s.d, eps_index_engine_band), s.grid_eps);
}

// The join of `req` against the index's side: in the grid's own metric, or (cosine, haversine)
// as a Euclidean join of unit vectors whose every pair is re-checked in the metric.
template <class T>
void join_side(const eps_index_state& s, const cpu::grid_side<T>& side, join_request& req,
               dataset_view queries) {
  const cpu::cpu_grid_params& params = grid_params(s);
  const distance_metric m = s.options.metric;
  if (!joins_unit_vectors(m)) {
    if constexpr (std::is_same_v<T, double>) {
      if (m == distance_metric::manhattan) {
        return cpu::join_against_side<double, distance_metric::manhattan>(req, params, side,
                                                                          req.stats);
      }
      if (m == distance_metric::chebyshev) {
        return cpu::join_against_side<double, distance_metric::chebyshev>(req, params, side,
                                                                          req.stats);
      }
    }
    return cpu::join_against_side<T>(req, params, side, req.stats);
  }
  stopwatch clock;
  const unsigned threads = std::max(1u, req.res.threads());
  const dataset query_units =
      req.self_join ? dataset() : unit_vectors(req.options, queries, threads);
  join_options unit_options = req.options;
  unit_options.metric = distance_metric::euclidean;
  unit_options.angles = angle_unit::radians;
  unit_options.sphere_radius = 1.0;
  unit_options.eps = grid_radius(s, req.options.eps);
  req.stats.add_stage("unit vectors", clock.seconds());
  req.stats.notes.emplace_back("unit-vector radius", concat(unit_options.eps));
  const dataset_view data_rows = s.points.view();
  metric_filter_sink filter(req.sink, req.options, req.self_join ? data_rows : queries, data_rows,
                            threads);
  const dataset_view units = s.units.view();
  join_request unit_req{req.res,      req.self_join ? units : query_units.view(),
                        units,        req.self_join,
                        unit_options, filter,
                        req.stats,    req.budget,
                        req.params};
  cpu::join_against_side<T>(unit_req, params, side, req.stats);
  req.stats.notes.emplace_back("metric re-checks", concat(filter.candidates()));
}

join_stats run_query(const eps_index_state& s, resources& res, dataset_view queries, bool self,
                     double eps, const query_options& qo, result_sink& sink) {
  stopwatch total;
  const unsigned threads = std::max(1u, res.threads());
  check_radius(eps, s.precision, "eps");
  EPSJOIN_EXPECTS(eps <= s.max_eps, "eps ", eps, " exceeds the index's max_eps ", s.max_eps,
                  "; build the eps_index at the largest eps you will query");
  EPSJOIN_EXPECTS(self || !qo.include_self,
                  "include_self applies to an eps_index's self_join, not to a query");
  EPSJOIN_EXPECTS(!sink.request().device_table, "an eps_index delivers to host sinks; take a ",
                  "csr_sink and copy the table to the device");
  join_options options = s.metric;
  options.eps = eps;
  options.include_self = self && qo.include_self;
  if (!self) {
    check_points(queries, "the query points", threads);
    EPSJOIN_EXPECTS(queries.n == 0 || s.n == 0 || queries.d == s.d, "query points have ", queries.d,
                    " dimensions but the indexed points have ", s.d);
    validate_metric_points(options, queries, "the query points");
  }
  const cpu::grid_side<float>* side32 =
      s.levels.empty() ? nullptr : std::get_if<cpu::grid_side<float>>(&s.levels.front());
  if (side32 != nullptr && !self && queries.n > 0 && !joins_unit_vectors(s.options.metric)) {
    // The query copies are float32 about the indexed points' centre, as a join's would be.
    EPSJOIN_EXPECTS(cpu::fits_float(grid::compute_column_stats(queries, threads), side32->center),
                    "query coordinates lie beyond the float32 range of this float32 eps_index ",
                    "(centred on the indexed points); build it with precision f64");
  }

  join_stats stats;
  stats.self_join = self;
  stats.n_queries = self ? s.n : queries.n;
  stats.n_data = s.n;
  stats.d = s.d;
  stats.eps = eps;
  stats.precision = s.precision;
  stats.threads = res.threads();
  stats.engine = "cpu-grid";
  stats.engine_reason = concat("eps_index built at max_eps ", s.max_eps);

  memory_budget budget = budget_of(res, s.options);
  counting_sink counted(sink);
  counted.set_budget(&budget, threads);
  const auto shown = std::make_shared<std::atomic<double>>(0.0);
  options.progress = progress_span(qo.progress, 0, engine_share, shown);
  // Ctrl-C also outside the join's reporting loops (the sink's finish sorts the rows).
  const progress_scope heard(options.progress);
  const sink_info info{stats.n_queries, s.n, self, options.include_self};
  counted.begin(info);
  if (stats.n_queries > 0 && s.n > 0) {
    auto run = [&](const auto& side) {
      const dataset_view data = side.input;
      join_request req{res,    self ? data : queries, data, self, options, counted, stats,
                       budget, s.params.get()};
      join_side(s, side, req, queries);
    };
    // The finest grid whose cells are still as wide as the query needs (coarse to fine).
    const double needed = grid_radius(s, eps);
    std::size_t level = 0;
    for (std::size_t l = 1; l < s.levels.size(); ++l) {
      if (std::visit([](const auto& side) { return side.eps; }, s.levels[l]) >= needed) level = l;
    }
    if (s.levels.size() > 1) {
      stats.notes.emplace_back("eps_index grid", concat(level, " of 0 to ", s.levels.size() - 1,
                                                        " (grid l: cells of max_eps / 2^l)"));
    }
    if (!self && walks_grid(s, level, queries)) {
      stats.candidates = walk_grid(s, level, queries, eps, counted);
      stats.notes.emplace_back("few queries", "the grid walked on the calling thread");
    } else {
      std::visit(run, s.levels[level]);
    }
  }
  stats.pairs = counted.pairs();
  if (options.include_self) {
    if (!counted.rows_delivered()) emit_self_pairs(sink, s.n);
    stats.self_pairs = s.n;
  }
  counted.finish();
  if (qo.progress) progress_span(qo.progress, 0, 1, shown)(1.0);
  stats.seconds = total.seconds();
  return stats;
}

}  // namespace

}  // namespace epsjoin::detail

namespace epsjoin {

join_stats eps_index::query(resources& res, dataset_view queries, double eps,
                            const query_options& options, result_sink& sink) const {
  return detail::run_query(*state_, res, queries, false, eps, options, sink);
}

neighbor_table eps_index::query(resources& res, dataset_view queries, double eps,
                                const query_options& options, join_stats* stats) const {
  csr_sink sink(true);
  join_stats s = query(res, queries, eps, options, sink);
  if (stats != nullptr) *stats = std::move(s);
  return sink.release();
}

join_stats eps_index::self_join(resources& res, double eps, const query_options& options,
                                result_sink& sink) const {
  return detail::run_query(*state_, res, {}, true, eps, options, sink);
}

}  // namespace epsjoin
