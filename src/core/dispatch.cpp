// The public entry points: validate, pick the engine, wrap the sink, run, fill the stats.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <limits>
#include <optional>
#include <thread>

#include "base/cancellation.hpp"
#include "base/cuda_part.hpp"
#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "base/progress.hpp"
#include "base/timer.hpp"
#include "core/auto_select.hpp"
#include "core/counting_sink.hpp"
#include "core/device_links.hpp"
#include "core/engine.hpp"
#include "core/geometry_join.hpp"
#include "core/metric_join.hpp"
#include "core/multi_device_join.hpp"
#include "core/point_checks.hpp"
#include "core/result_estimate.hpp"
#include "core/row_subset_sink.hpp"
#include "epsjoin/join.hpp"
#include "results/handover.hpp"

namespace epsjoin {

namespace detail {
namespace {

void validate_points(resources& res, dataset_view v, const char* what, unsigned threads) {
  check_points_shape(v, what);
  if (v.n == 0) return;
  if (v.on_device()) {
    EPSJOIN_EXPECTS(v.device == res.device(), what, " lies on CUDA device ", v.device,
                    " but the join runs on device ", res.device(),
                    " (resources' device); points are not copied between devices");
    check_device_points(res, v, what);
    return;
  }
  check_host_points_finite(v, what, threads);
}

void validate_options(const join_options& options) {
  EPSJOIN_EXPECTS(std::isfinite(options.eps) && options.eps > 0,
                  "eps must be a finite number > 0, got ", options.eps);
  // Within eps means d^2 <= eps^2. With eps^2 overflowing to inf, a pair whose d^2 overflows too
  // (points more than sqrt(max) apart) would count as within; with it finite, an overflowing
  // d^2 is rightly out.
  const bool f32 = options.precision == scalar_type::f32;
  const double largest = std::sqrt(f32 ? static_cast<double>(std::numeric_limits<float>::max())
                                       : std::numeric_limits<double>::max());
  EPSJOIN_EXPECTS(options.share.count >= 1 && options.share.index < options.share.count,
                  "share ", options.share.index, " of ", options.share.count,
                  " work-item shares does not exist (index from 0 to count - 1)");
  EPSJOIN_EXPECTS(options.eps <= largest, "eps must be at most ", largest, " in ",
                  f32 ? "f32" : "f64", " arithmetic (its square must be finite), got ",
                  options.eps);
}

std::string engines_sharing_work_items() {
  std::string which;
  for (const auto& r : registered_engines()) {
    if (r->shares_work_items()) which += concat(which.empty() ? "" : ", ", r->name());
  }
  return which;
}

// Whether engine e can run this join's metric and box.
bool fits_geometry(const engine& e, const join_options& o) {
  // A box reaches an engine that lacks it through images (core/periodic_join.hpp).
  return supports_metric(e, o.metric) &&
         (o.box.empty() || e.takes_periodic_box() || e.computes(o.metric));
}

std::string geometry_name(const join_options& o) {
  std::string what = concat("the ", to_string(o.metric), " metric");
  if (!o.box.empty()) what += " in a periodic box";
  return what;
}

// The available engines that can run the join's metric and box, brute-cpu last (the oracle is
// the slowest).
std::vector<const engine*> engines_for_geometry(const join_options& o) {
  std::vector<const engine*> fit;
  const engine* brute = nullptr;
  for (const auto& r : registered_engines()) {
    if (!fits_geometry(*r, o) || !r->unavailable_reason().empty()) continue;
    if (r->name() == "brute-cpu") {
      brute = r.get();
    } else {
      fit.push_back(r.get());
    }
  }
  // Those that compute the metric before those that run it through a Euclidean join.
  std::stable_partition(fit.begin(), fit.end(), [&](const engine* e) { return e->computes(o.metric); });
  if (brute != nullptr) fit.push_back(brute);
  return fit;
}

const engine& resolve_engine(const join_request& request, std::string& reason) {
  const join_options& o = request.options;
  const std::string& name = o.engine;
  if (name == "auto") {
    // Cosine and haversine run as a join of unit vectors: choose for the dimension joined.
    join_request probe = request;
    if (o.metric == distance_metric::haversine) probe.queries.d = probe.data.d = 3;
    engine_choice choice = choose_engine(probe);
    // L1 and L-infinity on a Euclidean engine deliver the pairs of a ball that outgrows the
    // metric's as 2^d / d! (L1) or d^(d/2) (L-infinity): `auto` keeps to the engines that compute
    // them, and a Euclidean engine runs them only when named.
    const bool enclosing = joins_enclosing_ball(o.metric) && !choice.chosen->computes(o.metric);
    if (fits_geometry(*choice.chosen, o) && !enclosing) {
      reason = std::move(choice.reason);
      return *choice.chosen;
    }
    const std::vector<const engine*> fit = engines_for_geometry(o);
    if (fit.empty()) throw unavailable(concat("no available engine runs ", geometry_name(o)));
    reason = enclosing ? concat(fit.front()->name(), ": ", choice.chosen->name(),
                                " would run ", geometry_name(o), " through a Euclidean ball")
                       : concat(fit.front()->name(), ": ", choice.chosen->name(), " does not run ",
                                geometry_name(o));
    return *fit.front();
  }
  const engine* e = find_engine(name);
  if (e == nullptr) {
    std::string known;
    for (const auto& r : registered_engines()) known += concat(known.empty() ? "" : ", ", r->name());
    throw invalid_argument(concat("unknown engine '", name, "'; known engines: auto, ", known));
  }
  if (!fits_geometry(*e, o)) {
    std::string which;
    for (const auto& r : registered_engines()) {
      if (fits_geometry(*r, o)) which += concat(which.empty() ? "" : ", ", r->name());
    }
    throw invalid_argument(concat("engine '", name, "' does not run ", geometry_name(o),
                                  "; engines that do: ", which));
  }
  if (std::string why = e->unavailable_reason(); !why.empty()) {
    throw unavailable(concat("engine '", name, "' cannot run here: ", why));
  }
  return *e;
}

// A share of the work items (join_options::share) is counted by an engine that counts one, on
// a geometry it computes itself; `auto` keeps its choice where that engine can, else takes the
// first engine that can (the GPU's before the CPU's).
const engine& resolve_share_engine(const join_request& request, std::string& reason) {
  const join_options& o = request.options;
  EPSJOIN_EXPECTS(request.sink.request().counts_only(), "a share of the work items (join_options::share) ",
                  "is counted only: it needs a counts-only sink (--format count)");
  EPSJOIN_EXPECTS(o.metric == distance_metric::euclidean && o.box.empty(),
                  "a share of the work items (join_options::share) is counted in the euclidean "
                  "metric without a periodic box");
  const engine& e = resolve_engine(request, reason);
  if (e.shares_work_items()) return e;
  EPSJOIN_EXPECTS(o.engine == "auto", "engine '", e.name(),
                  "' cannot count a share of the work items; engines that can: ",
                  engines_sharing_work_items());
  std::vector<const engine*> fit = engines_for_geometry(o);
  std::stable_partition(fit.begin(), fit.end(),
                        [](const engine* f) { return f->processor() != "cpu"; });
  for (const engine* f : fit) {
    if (!f->shares_work_items()) continue;
    reason = concat(f->name(), ": a share of the work items, which ", e.name(), " (", reason,
                    ") cannot count");
    return *f;
  }
  throw unavailable(concat("no available engine counts a share of the work items (those that "
                           "can: ", engines_sharing_work_items(), ")"));
}

// The engine that counts a result estimate's sample: cpu-grid (exact, on every thread, its index
// built in a pass over the points) where it runs the join's geometry, else the join's own.
std::string_view sampler_for(const engine& e, const join_options& o) {
  const engine* grid = find_engine("cpu-grid");
  if (grid != nullptr && grid->unavailable_reason().empty() && fits_geometry(*grid, o)) {
    return grid->name();
  }
  return e.name();
}

// A CPU engine counts every pair before it can size a table, and an engine that hands over pairs
// is stopped only once they fill the memory: for a result far over the limit, minutes of work
// before the refusal. An estimate from a sample refuses those at once (core/result_estimate.hpp).
// The GPU engines count on the device in seconds, and a table they lay out there or stream in
// blocks may not be held on the host at all: the exact check after their count stays theirs.
void refuse_early(const engine& e, join_request& request, const join_options& options,
                  const result_sink& sink) {
  const sink_request wanted = sink.request();
  if (e.processor() != "cpu" || !wanted.keeps_result_in_memory || wanted.counts_only()) return;
  if (request.queries.n == 0 || request.data.n == 0) return;
  const bool self_ids = request.self_join && options.include_self;
  refuse_what_cannot_fit(request.res, request.queries, request.data, request.self_join, options,
                         {sampler_for(e, options), e.error_band()},
                         result_footprint::of(sink, request.queries.n, self_ids), request.budget,
                         request.stats);
}

// The sink of a join whose pairs are linked on the device (device_link_consumer): nothing may
// arrive.
class no_pairs_sink final : public result_sink {
 public:
  void consume(std::span<const index_pair> pairs) override {
    if (!pairs.empty()) throw error("internal: a device-links join delivered pairs to the host");
  }
};

// With `device_links`, nullopt (nothing run) when the engine cannot link on the device.
std::optional<join_stats> run_join(resources& res, dataset_view queries, dataset_view data,
                                   bool self, const join_options& options, result_sink& sink,
                                   device_link_consumer* device_links = nullptr) {
  stopwatch total;
  validate_options(options);
  validate_points(res, data, self ? "the dataset" : "the indexed dataset B", res.threads());
  if (!self) {
    validate_points(res, queries, "the query dataset A", res.threads());
    EPSJOIN_EXPECTS(queries.n == 0 || data.n == 0 || queries.d == data.d,
                    "query points have ", queries.d, " dimensions but indexed points have ",
                    data.d);
  }
  // The other metrics and the periodic box transform or re-check points on the host.
  EPSJOIN_EXPECTS(!(data.on_device() || queries.on_device()) ||
                      (options.metric == distance_metric::euclidean && options.box.empty()),
                  "points in device memory are joined in the euclidean metric without a periodic "
                  "box; copy them to the host for the ", to_string(options.metric), " metric",
                  options.box.empty() ? "" : " or a periodic box");
  validate_metric_options(options, data.n > 0 ? data.d : queries.d);
  validate_metric_points(options, data, self ? "the dataset" : "the indexed dataset B");
  if (!self) validate_metric_points(options, queries, "the query dataset A");

  join_stats stats;
  stats.self_join = self;
  stats.n_queries = queries.n;
  stats.n_data = data.n;
  stats.d = data.n > 0 ? data.d : queries.d;
  stats.eps = options.eps;
  stats.precision = options.precision;
  stats.threads = res.threads();

  counting_sink counted(sink);
  // The progress the caller sees never goes back, whatever an engine's passes report.
  join_options run_options = options;
  const auto shown = std::make_shared<std::atomic<double>>(0.0);
  run_options.progress = progress_span(options.progress, 0, engine_share, shown);
  // Ctrl-C also between and around the engine's reporting loops: the sink's finish sorts the
  // rows (10 s of a 256M-pair graph, unheard before), the planning, the layout.
  const progress_scope heard(run_options.progress);
  join_request request{res, queries, data, self, run_options, counted, stats, {}, nullptr};
  const bool shared = options.share.count > 1;
  const engine& e = shared ? resolve_share_engine(request, stats.engine_reason)
                           : resolve_engine(request, stats.engine_reason);
  // Rows on the device are the engine's own Euclidean rows: a metric joined through unit vectors
  // or periodic images re-checks pairs on the host, so those take the host path.
  const bool geometry_on_host = (runs_on_euclidean(options.metric) && !e.computes(options.metric)) ||
                                (!options.box.empty() && !e.takes_periodic_box());
  if (device_links != nullptr && (!e.takes_device_links() || geometry_on_host)) return std::nullopt;
  request.device_links = device_links;
  if (device_links != nullptr) device_links->linking_starts();
  // Parsed once, here, before any work: a bad parameter fails the join before it starts.
  const std::unique_ptr<const engine_params> params = e.parse_params(options.params);
  request.params = params.get();
  request.budget = memory_budget(res.memory(), read_memory_overrides(options.params));
  const sink_request wanted = sink.request();
  EPSJOIN_EXPECTS(!wanted.distances ||
                      (options.metric == distance_metric::euclidean && options.box.empty() &&
                       !data.on_device() && !queries.on_device()),
                  "a table's distances are Euclidean distances of points in host memory, without "
                  "a periodic box");
  request.budget.set_result_streamed(!wanted.keeps_result_in_memory && !wanted.counts_only());
  counted.set_budget(&request.budget, res.threads());
  stats.engine = std::string(e.name());
  if ((data.on_device() && data.n > 0) || (queries.on_device() && queries.n > 0)) {
    // The CPU engines, and hegjoin's CPU workers, read the points on the host.
    EPSJOIN_EXPECTS(e.reads_device_points(), "engine '", e.name(),
                    "' reads its points on the host; points in device memory take a GPU engine "
                    "(or copy them to the host first)");
  }
  if (wanted.device_table && !cuda_part_built()) {
    throw unavailable("a result in device memory (device_csr_sink) needs epsjoin built with CUDA");
  }

  // Before the sink is begun: nothing of the result is allocated when this refuses it.
  if (device_links == nullptr && !shared) refuse_early(e, request, options, sink);
  const sink_info info{queries.n, data.n, self, self && options.include_self,
                       request.budget.limits().host_bytes, queries, data, res.device()};
  counted.begin(info);
  if (queries.n > 0 && data.n > 0 && runs_on_euclidean(options.metric) &&
      !e.computes(options.metric)) {
    run_on_euclidean(e, request, counted);
  } else if (queries.n > 0 && data.n > 0 && !options.box.empty() && !e.takes_periodic_box()) {
    run_periodic(e, request, counted);
  } else if (queries.n > 0 && data.n > 0) {
    work_share process_share{options.share.index, options.share.count};
    if (shared) {
      // One device a process: its share is the unit the caller spreads.
      request.item_share = &process_share;
      e.run(request);
      EPSJOIN_ENSURE(process_share.honoured, error, "internal: engine '", e.name(),
                     "' counted every work item instead of its share");
    } else if (spreads_over_devices(e, request)) {
      run_on_devices(e, request);
    } else {
      e.run(request);
    }
  }
  stats.pairs = counted.pairs();
  if (request.budget.host_charged_peak() > 0) {
    stats.notes.emplace_back("host memory charged (peak)",
                             human_bytes(request.budget.host_charged_peak()));
  }
  // The self pairs of a join shared by work items are share 0's.
  if (self && options.include_self && options.share.index == 0) {
    if (!counted.rows_delivered()) emit_self_pairs(sink, data.n);
    stats.self_pairs = data.n;
  }
  // A sink that wants its table on the device and got the rows through the host (a CPU engine,
  // or a table that did not fit beside the GPU engine's work) uploads them as it finishes.
  const bool uploads = wanted.device_table && !counted.device_table_delivered();
  stopwatch finishing;
  counted.finish();
  if (uploads) {
    stats.h2d_result_bytes = (queries.n + 1) * sizeof(std::uint64_t) +
                             (stats.pairs + stats.self_pairs) * sizeof(std::uint32_t);
    stats.add_stage("result upload", finishing.seconds());
  }
  if (options.progress) progress_span(options.progress, 0, 1, shown)(1.0);
  stats.seconds = total.seconds();
  return stats;
}

}  // namespace

std::optional<join_stats> self_join_on_device(resources& res, dataset_view points,
                                              const join_options& options,
                                              device_link_consumer& consumer) {
  join_options without_self = options;
  without_self.include_self = false;
  no_pairs_sink nothing;
  return run_join(res, points, points, true, without_self, nothing, &consumer);
}

}  // namespace detail

join_stats self_join(resources& res, dataset_view data, const join_options& options,
                     result_sink& sink) {
  return *detail::run_join(res, data, data, true, options, sink);
}

join_stats join(resources& res, dataset_view queries, dataset_view data,
                const join_options& options, result_sink& sink) {
  return *detail::run_join(res, queries, data, false, options, sink);
}

join_stats self_join_rows(resources& res, dataset_view points, std::size_t n_rows,
                          const join_options& options, result_sink& sink) {
  EPSJOIN_EXPECTS(n_rows <= points.n, "self_join_rows: ", n_rows, " rows asked of ", points.n,
                  " points");
  detail::row_subset_sink rows(sink, {}, n_rows, {}, {.standalone = true, .threads = res.threads()});
  // The rows kept until they are laid out are bounded by the same budget as the join's.
  const detail::memory_budget budget(res.memory(), {});
  rows.set_budget(budget);
  join_stats stats = *detail::run_join(res, points, points, true, options, rows);
  // The own rows' pairs, which hold their self pairs when asked for.
  stats.self_join = false;
  stats.n_queries = n_rows;
  stats.self_pairs = options.include_self ? n_rows : 0;
  stats.pairs = rows.pairs() - stats.self_pairs;
  return stats;
}

neighbor_table self_join(resources& res, dataset_view data, const join_options& options,
                         join_stats* stats) {
  csr_sink sink;
  join_stats s = self_join(res, data, options, sink);
  if (stats != nullptr) *stats = std::move(s);
  return sink.release();
}

std::vector<engine_info> engines() {
  std::vector<engine_info> list;
  for (const auto& e : detail::registered_engines()) {
    engine_info info;
    info.name = std::string(e->name());
    info.processor = std::string(e->processor());
    info.description = std::string(e->description());
    info.unavailable_reason = e->unavailable_reason();
    info.available = info.unavailable_reason.empty();
    info.error_band = e->error_band();
    for (distance_metric m : {distance_metric::euclidean, distance_metric::manhattan,
                              distance_metric::chebyshev, distance_metric::cosine,
                              distance_metric::haversine}) {
      if (detail::supports_metric(*e, m)) info.metrics.push_back(m);
    }
    info.periodic = e->takes_periodic_box() || e->computes(distance_metric::euclidean);
    info.shares_work_items = e->shares_work_items();
    for (const detail::param_spec& p : e->param_specs()) {
      info.params.push_back({p.key, std::string(detail::kind_name(p.kind)), p.description});
    }
    list.push_back(std::move(info));
  }
  return list;
}

}  // namespace epsjoin
