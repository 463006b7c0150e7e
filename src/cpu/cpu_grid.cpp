// cpu-grid: GPU-SJ's eps-grid on CPU threads.
//
// Self-join: every non-empty cell is a task (a dense cell is cut into several) and examines the
// neighbour cells its access pattern selects. Under lid-unicomp (default) and unicomp each
// unordered pair of points is computed once and both directions are delivered (into a CSR
// table: both rows written in place after a count pass; into a sink that keeps unordered pairs,
// the pair once, as (min, max)); under full every query examines all
// 3^k cells and delivers its own side only. A x B: B is indexed, A is binned
// into B's grid and each cell of A examines its full neighbourhood in B. Tasks run from the
// heaviest power-of-two class of workload (distances to compute) to the lightest, in cell order
// within a class, handed out from a shared counter; each thread emits through its own buffer.
//
// Params (all optional): pattern = lid-unicomp | unicomp | full; lookup = rows | tree | binary;
// masks = on | off; max_indexed_dims = 0..8; reorder = on | off (dimensions by variance);
// layout = auto | columns | rows; early_exit = 0 | 8 | 16 (row layout: dimensions
// between checks of the partial sum); gather = off | 1..9; simd = auto | baseline;
// fill = auto | halved | full (a self-join's CSR rows).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <optional>
#include <span>

#include "core/builtin_engines.hpp"
#include "core/cpu_isa.hpp"
#include "core/delivery.hpp"
#include "core/row_cursors.hpp"
#include "core/row_scatter.hpp"
#include "core/expects.hpp"
#include "core/parallel.hpp"
#include "core/progress.hpp"
#include "core/timer.hpp"
#include "cpu/grid_dispatch.hpp"
#include "grid/plan.hpp"

namespace epsjoin::detail {

namespace {

using cpu::grid_task;
using cpu::join_inputs;

struct cpu_grid_params final : engine_params {
  grid::access_pattern pattern = grid::access_pattern::lid_unicomp;
  cpu::lookup_method lookup = cpu::lookup_method::rows;
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

// Measured (one thread, 2-core machine, bench/RESULTS.md "CPU delivery"): the halved fill
// computes half the distances but writes the other side of every pair into a row elsewhere in
// the table. On the real 50k samples (10 MB tables) and Expo2D 2M it ties FULL; on uniform 2-D
// 2M at S 50 (a 400 MB table, ids in random order) it took 1.4x FULL's time (0.91-0.95 s of
// user time against 0.68-0.71 s): there the scattered stores cost more than the distances saved.
constexpr std::uint64_t halved_fill_max_bytes = std::uint64_t{64} << 20;

bool parse_switch(const std::string& key, const std::string& v) {
  if (v == "on" || v == "1" || v == "true") return true;
  if (v == "off" || v == "0" || v == "false") return false;
  throw invalid_argument(concat("cpu-grid: ", key, " must be on or off, got '", v, "'"));
}

// cpu-grid's messages predate the shared readers (tests and scripts quote them), so each key is
// declared through reader.text and checked here.
std::unique_ptr<const engine_params> read_cpu_grid_params(param_reader& r) {
  using kind = param_kind;
  auto p = std::make_unique<cpu_grid_params>();
  if (const std::string* v = r.text("pattern", kind::ablation,
                                    "lid-unicomp | unicomp | full: neighbour cells a cell examines "
                                    "(each pair once, halved; or all 3^k)")) {
    if (*v == "lid-unicomp") p->pattern = grid::access_pattern::lid_unicomp;
    else if (*v == "unicomp") p->pattern = grid::access_pattern::unicomp;
    else if (*v == "full") p->pattern = grid::access_pattern::full;
    else throw invalid_argument(concat("cpu-grid: pattern must be lid-unicomp, unicomp or full, got '", *v, "'"));
  }
  if (const std::string* v = r.text("lookup", kind::ablation,
                                    "rows | tree | binary: how a neighbour cell is found")) {
    if (*v == "rows") p->lookup = cpu::lookup_method::rows;
    else if (*v == "binary") p->lookup = cpu::lookup_method::binary;
    else if (*v == "tree") p->lookup = cpu::lookup_method::tree;
    else throw invalid_argument(concat("cpu-grid: lookup must be rows, tree or binary, got '", *v, "'"));
  }
  if (const std::string* v = r.text("masks", kind::ablation,
                                    "on | off: per-dimension masks of non-empty cells")) {
    p->masks = parse_switch("masks", *v);
  }
  if (const std::string* v = r.text("max_indexed_dims", kind::tuning,
                                    "0 to 8: most dimensions the grid indexes (default 6)")) {
    EPSJOIN_EXPECTS(v->size() == 1 && (*v)[0] >= '0' && (*v)[0] <= '0' + grid::max_indexed_dims,
                    "cpu-grid: max_indexed_dims must be 0 to ", grid::max_indexed_dims,
                    ", got '", *v, "'");
    p->max_k = (*v)[0] - '0';
  }
  if (const std::string* v = r.text("reorder", kind::ablation,
                                    "on | off: index the dimensions by variance, widest first")) {
    p->reorder = parse_switch("reorder", *v);
  }
  if (const std::string* v = r.text("early_exit", kind::tuning,
                                    "0 | 8 | 16: row layout, dimensions between checks of the "
                                    "partial sum (0 never)")) {
    EPSJOIN_EXPECTS(*v == "0" || *v == "8" || *v == "16",
                    "cpu-grid: early_exit must be 0, 8 or 16 (dimensions between checks; ",
                    "0 never), got '", *v, "'");
    p->early_exit = std::stoi(*v);
  }
  if (const std::string* v = r.text("layout", kind::tuning,
                                    "auto | columns | rows: how points are stored for the kernels")) {
    if (*v == "auto") p->layout = cpu_grid_params::layout_kind::automatic;
    else if (*v == "columns") p->layout = cpu_grid_params::layout_kind::columns;
    else if (*v == "rows") p->layout = cpu_grid_params::layout_kind::rows;
    else throw invalid_argument(concat("cpu-grid: layout must be auto, columns or rows, got '", *v, "'"));
  }
  if (const std::string* v = r.text("simd", kind::ablation,
                                    "auto | baseline: AVX2 kernels where the CPU has them, or "
                                    "the x86-64 baseline")) {
    if (*v == "auto") p->avx2 = true;
    else if (*v == "baseline") p->avx2 = false;
    else throw invalid_argument(concat("cpu-grid: simd must be auto or baseline, got '", *v, "'"));
  }
  if (const std::string* v = r.text("gather", kind::tuning,
                                    "off | 1 to 9: fewest candidate ranges of a task copied "
                                    "into one buffer (default 2)")) {
    EPSJOIN_EXPECTS(*v == "off" || (v->size() == 1 && (*v)[0] >= '1' && (*v)[0] <= '9'),
                    "cpu-grid: gather must be off or 1 to 9 (the fewest candidate ranges of a ",
                    "task copied into one buffer), got '", *v, "'");
    p->gather_min_spans = *v == "off" ? 0u : static_cast<unsigned>((*v)[0] - '0');
  }
  if (const std::string* v = r.text("fill", kind::tuning,
                                    "auto | halved | full: a self-join's CSR rows filled with "
                                    "each pair found once and written to both rows, or each row "
                                    "by its own query under the full pattern (auto: halved up "
                                    "to a 64 MiB table)")) {
    if (*v == "auto") p->fill = cpu_grid_params::fill_kind::automatic;
    else if (*v == "halved") p->fill = cpu_grid_params::fill_kind::halved;
    else if (*v == "full") p->fill = cpu_grid_params::fill_kind::full;
    else throw invalid_argument(concat("cpu-grid: fill must be auto, halved or full, got '", *v, "'"));
  }
  return p;
}

const char* pattern_name(grid::access_pattern p) {
  switch (p) {
    case grid::access_pattern::full: return "full";
    case grid::access_pattern::unicomp: return "unicomp";
    case grid::access_pattern::lid_unicomp: return "lid-unicomp";
  }
  return "?";
}

// Whether float32 copies (centred on B's column midpoints) of every coordinate are finite.
bool fits_float(const join_request& req, const grid::column_stats& data_stats, unsigned threads) {
  auto fits = [&](const grid::column_stats& s) {
    for (std::size_t j = 0; j < s.min.size(); ++j) {
      const double c = 0.5 * (data_stats.min[j] + data_stats.max[j]);
      if (!(std::max(c - s.min[j], s.max[j] - c) < 0x1p127)) return false;
    }
    return true;
  };
  if (!fits(data_stats)) return false;
  return req.self_join || fits(grid::compute_column_stats(req.queries, threads));
}

template <class T, distance_metric M = distance_metric::euclidean>
void run_precision(join_request& req, const cpu_grid_params& params, const grid::column_stats& cstats,
                   join_stats& stats) {
  stopwatch clock;
  const unsigned threads = std::max(1u, req.res.threads());
  const bool self = req.self_join;
  const dataset_view data = self ? req.queries : req.data;

  grid::plan_options popt;
  popt.eps = req.options.eps;
  popt.max_k = params.max_k;
  popt.reorder = params.reorder;
  const grid::grid_plan plan = grid::plan_grid(cstats, popt);
  grid::build_options bopt;
  bopt.threads = threads;
  bopt.copy_points = false;  // the engine keeps its own layout, below
  bopt.masks = params.masks;
  grid::build_timings bt;
  const grid::host_index data_index = grid::build_host_index(data, plan.geo, plan.dim_order, bopt, &bt);
  std::unique_ptr<grid::host_index> query_index;
  if (!self) {
    bopt.masks = false;
    query_index = std::make_unique<grid::host_index>(
        grid::build_host_index(req.queries, plan.geo, plan.dim_order, bopt, &bt));
  }
  const grid::host_index& queries = self ? data_index : *query_index;

  // Columns for d <= 8 unless rows are asked for (columns cannot hold more dimensions).
  const bool by_column =
      data.d <= cpu::soa_max_dims && params.layout != cpu_grid_params::layout_kind::rows;
  std::vector<double> center(data.d, 0.0);
  for (std::size_t j = 0; j < data.d; ++j) center[j] = 0.5 * (cstats.min[j] + cstats.max[j]);
  const cpu::point_block<T> dblock = cpu::gather_block<T>(data, data_index.permutation,
                                                          plan.dim_order, center, by_column, threads);
  cpu::point_block<T> qblock_own;
  if (!self) {
    qblock_own = cpu::gather_block<T>(req.queries, queries.permutation, plan.dim_order, center,
                                      by_column, threads);
  }
  const cpu::point_block<T>& qblock = self ? dblock : qblock_own;
  stats.add_stage("index", clock.seconds());
  clock.restart();

  // One pass over a schedule of `pattern`: counts by position (counts mode), pairs to the sink,
  // or each query's row written in place (`rows`, FULL pattern only: a query's task owns its row).
  struct pass_result {
    std::vector<std::uint32_t> counts;
    std::uint64_t candidates = 0, rechecks = 0, gathered = 0;
    std::size_t tasks = 0, stored_ranges = 0;
    bool avx2 = false;
  };
  // A halved self-join finds each pair once: a sink that keeps unordered pairs gets each once.
  const delivery out(req.sink, threads, self && params.pattern != grid::access_pattern::full);
  // Progress: a pass reports from 0 to 1; `span` places it within the whole join.
  const auto shown = std::make_shared<std::atomic<double>>(0.0);
  std::optional<cpu::grid_schedule> planned;
  grid::access_pattern planned_pattern = grid::access_pattern::full;
  auto run_pass = [&](grid::access_pattern pattern, bool count_only, row_scatter_sink* rows,
                      const row_cursors* shared, double span_begin,
                      double span_end) -> pass_result {
    join_options pass_options = req.options;
    pass_options.progress = progress_span(req.options.progress, span_begin, span_end, shown);
    join_request pass_req{req.res,  req.queries, req.data,  req.self_join, pass_options,
                          req.sink, req.stats,   req.budget, req.params};
    cpu::plan_settings settings;
    settings.range_budget_bytes = req.budget.host_scratch_bytes();
    settings.halved = self && pattern != grid::access_pattern::full;
    settings.pattern = self ? pattern : grid::access_pattern::full;
    settings.lookup = params.lookup;
    settings.use_masks = params.masks;
    settings.threads = threads;
    // A fill under the count's pattern runs the count's schedule again: planning it (finding
    // every cell's neighbour ranges) costs as much as a sparse join's distances.
    if (!planned || planned_pattern != settings.pattern) {
      planned.reset();
      planned.emplace(cpu::plan_schedule(queries, data_index, settings));
      planned_pattern = settings.pattern;
    }
    const cpu::grid_schedule& schedule = *planned;

    join_inputs<T> in{};
    in.queries = &queries;
    in.data = &data_index;
    in.query_input = self ? data : req.queries;
    in.data_input = data;
    in.schedule = &schedule;
    in.settings = &settings;
    in.eps2 = req.options.eps * req.options.eps;
    if constexpr (M != distance_metric::euclidean) {
      static_assert(std::is_same_v<T, double>, "cpu-grid computes L1 and L-infinity in float64");
      in.limit = {norm_limit<M>(req.options.eps), norm_limit<M>(req.options.eps)};
    } else if constexpr (std::is_same_v<T, float>) {
      in.limit = cpu::float_thresholds(req.options.eps, data.d, dblock.rounding, qblock.rounding);
    } else {
      in.limit = cpu::double_thresholds(req.options.eps);
    }
    in.skip_self = self && !settings.halved;
    in.avx2 = params.avx2 && isa::cpu_has_v3();
    in.gather_min_spans = params.gather_min_spans;
    pass_result result;
    std::vector<std::uint32_t>& counts = result.counts;
    std::vector<std::vector<std::uint32_t>> private_counts;
    std::vector<cpu::worker_state<T>> workers(threads);
    if (count_only) {
      counts.assign(queries.n_points(), 0);
      in.counts = counts.data();
      // A halved join counts both sides of a pair, the candidate's in cells other threads may be
      // counting too: a private array per thread when they fit, atomic adds otherwise.
      if (settings.halved && threads > 1 &&
          std::uint64_t{threads} * queries.n_points() * 4 <= req.budget.host_scratch_bytes()) {
        private_counts.resize(threads);
        parallel_for(threads, threads, 1, [&](std::size_t w, std::size_t, unsigned) {
          private_counts[w].assign(queries.n_points(), 0);
          workers[w].private_counts = private_counts[w].data();
        });
      } else if (settings.halved && threads == 1) {
        workers[0].private_counts = counts.data();  // one thread: its own array is the result
      }
    } else {
      EPSJOIN_ENSURE(rows == nullptr || !settings.halved, error,
                     "internal: one-sided rows are written under the FULL pattern only");
      EPSJOIN_ENSURE(shared == nullptr || settings.halved, error,
                     "internal: shared rows are written by a halved self-join only");
      for (auto& w : workers) {
        w.rows = rows;
        w.shared = shared;
        if (rows == nullptr && shared == nullptr) {
          w.unordered = settings.halved && out.pairs_once();
          w.emitter.emplace(w.unordered ? out.unordered_emitter() : out.emitter());
        }
      }
    }
    if (dblock.by_column) {
      cpu::execute_columns<T, M>(pass_req, in, settings.halved, qblock, dblock, workers);
    } else {
      cpu::execute_rows<T, M>(pass_req, in, settings.halved, qblock, dblock, params.early_exit,
                           workers);
    }
    for (auto& w : workers) {
      if (w.emitter) w.emitter->flush();
      result.rechecks += w.rechecks;
      result.gathered += w.gathered_tasks;
    }
    if (!private_counts.empty()) {
      parallel_for(threads, counts.size(), std::size_t{1} << 16,
                   [&](std::size_t begin, std::size_t end, unsigned) {
        for (const auto& part : private_counts) {
          for (std::size_t p = begin; p < end; ++p) counts[p] += part[p];
        }
      });
    }
    result.candidates = schedule.total_work;
    result.tasks = schedule.tasks.size();
    result.stored_ranges = schedule.stored_ranges;
    result.avx2 = in.avx2;
    return result;
  };

  pass_result last;
  std::uint64_t candidates = 0, rechecks = 0;
  std::string pattern_note = pattern_name(self ? params.pattern : grid::access_pattern::full);
  if (out.form() == delivery_form::counts) {
    last = run_pass(params.pattern, true, nullptr, nullptr, 0, 1);
    out.counts(queries.permutation, last.counts);
    stats.add_stage("execute", clock.seconds());
  } else if (out.form() == delivery_form::pairs) {
    last = run_pass(params.pattern, false, nullptr, nullptr, 0, 1);
    stats.add_stage("execute", clock.seconds());
  } else {
    // Rows: count (the cheap pattern), lay the rows out, then fill them in place; the index is
    // built once. A halved self-join fills under its own pattern, each pair found once and
    // written to both rows; otherwise (A x B, or pattern=full) under the FULL pattern, whose
    // task of a query writes its whole row in one run.
    pass_result counted = run_pass(params.pattern, true, nullptr, nullptr, 0, count_pass_share);
    candidates += counted.candidates;
    rechecks += counted.rechecks;
    std::vector<std::uint32_t> by_query(req.queries.n, 0);
    parallel_for(threads, counted.counts.size(), std::size_t{1} << 16,
                 [&](std::size_t begin, std::size_t end, unsigned) {
      for (std::size_t p = begin; p < end; ++p) by_query[queries.permutation[p]] = counted.counts[p];
    });
    stats.add_stage("count", clock.seconds());
    clock.restart();
    std::uint64_t table_pairs = 0;
    for (const std::uint32_t c : counted.counts) table_pairs += c;
    const bool halved =
        self && params.pattern != grid::access_pattern::full &&
        (params.fill == cpu_grid_params::fill_kind::halved ||
         (params.fill == cpu_grid_params::fill_kind::automatic &&
          table_pairs * sizeof(std::uint32_t) <= halved_fill_max_bytes));
    delivery rows_out(req.sink, threads);
    const row_destination dest = rows_out.lay_out(by_query);
    if (halved) {
      by_query = {};
      const host_charge cursors = req.budget.charge_host(
          row_cursors::bytes_for(queries.permutation.size()), "the row cursors");
      const row_cursors shared(dest, queries.permutation, threads > 1, threads);
      stats.add_stage("rows", clock.seconds());
      clock.restart();
      last = run_pass(params.pattern, false, nullptr, &shared, count_pass_share, 1);
      shared.check_complete(counted.counts);
      pattern_note = concat(pattern_note, " (count and fill)");
    } else {
      counted.counts = {};
      const host_charge spans =
          req.budget.charge_host(row_scatter_sink::bytes_for(by_query.size()), "the row cursors");
      row_scatter_sink rows(dest, by_query);
      stats.add_stage("rows", clock.seconds());
      clock.restart();
      last = run_pass(grid::access_pattern::full, false, &rows, nullptr, count_pass_share, 1);
      rows.check_complete();
      pattern_note = concat(pattern_note, " (count), full (fill)");
    }
    stats.add_stage("fill", clock.seconds());
  }
  candidates += last.candidates;
  rechecks += last.rechecks;

  stats.candidates += candidates;
  stats.notes.emplace_back("grid", plan.reason);
  stats.notes.emplace_back("non-empty cells", std::to_string(data_index.n_cells()));
  stats.notes.emplace_back("pattern", pattern_note);
  stats.notes.emplace_back("tasks", concat(last.tasks, " (", last.gathered,
                                           " with candidates gathered)"));
  stats.notes.emplace_back("neighbour ranges stored", concat(last.stored_ranges, " (cells over ",
                                                             "the budget look theirs up again)"));
  stats.notes.emplace_back("layout", by_column ? "columns" : "rows");
  stats.notes.emplace_back("simd", last.avx2 ? "x86-64-v3 (32-byte vectors)"
                                             : "baseline (16-byte vectors)");
  stats.notes.emplace_back("index build (ids/sort/cells/masks s)",
                           concat(bt.ids, " / ", bt.sort, " / ", bt.cells, " / ", bt.masks));
  if (std::is_same_v<T, float>) stats.notes.emplace_back("float64 re-checks", std::to_string(rechecks));
  if (!self) stats.notes.emplace_back("queries outside the grid", std::to_string(queries.outside));
}

class cpu_grid final : public engine {
 public:
  std::string_view name() const override { return "cpu-grid"; }
  std::string_view processor() const override { return "cpu"; }
  std::string_view description() const override {
    return "eps-grid of GPU-SJ on CPU threads: LID-UNICOMP halving, heaviest cells first";
  }
  // A sink that takes rows gets them from cpu-grid's own two passes over one index (count, then
  // the rows written in place: under the count's pattern in a self-join, both rows of each pair
  // at once; under FULL in A x B), not from dispatch's.
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    return read_cpu_grid_params(reader);
  }
  // Cells of side >= eps hold every L-infinity (and so L1) neighbour in the adjacent cells, as
  // they do the Euclidean ones: only the refinement changes.
  bool computes(distance_metric m) const override {
    return m == distance_metric::euclidean || m == distance_metric::manhattan ||
           m == distance_metric::chebyshev;
  }
  void run(join_request& req) const override {
    const cpu_grid_params& params = req.params_as<cpu_grid_params>();
    const unsigned threads = std::max(1u, req.res.threads());
    stopwatch clock;
    const dataset_view data = req.self_join ? req.queries : req.data;
    const grid::column_stats cstats = grid::compute_column_stats(data, threads);
    req.stats.add_stage("index", clock.seconds());
    if (req.options.metric != distance_metric::euclidean) {
      if (req.options.precision == scalar_type::f32) {
        req.stats.notes.emplace_back("precision", concat("float64: ", to_string(req.options.metric),
                                                         " is computed in float64"));
      }
      if (req.options.metric == distance_metric::manhattan) {
        run_precision<double, distance_metric::manhattan>(req, params, cstats, req.stats);
      } else {
        run_precision<double, distance_metric::chebyshev>(req, params, cstats, req.stats);
      }
      return;
    }
    if (req.options.precision == scalar_type::f32) {
      if (fits_float(req, cstats, threads)) {
        run_precision<float>(req, params, cstats, req.stats);
        return;
      }
      req.stats.notes.emplace_back("precision", "float64: coordinates exceed the float32 range");
    }
    run_precision<double>(req, params, cstats, req.stats);
  }
};

}  // namespace

std::unique_ptr<engine> make_cpu_grid_engine() { return std::make_unique<cpu_grid>(); }

}  // namespace epsjoin::detail
