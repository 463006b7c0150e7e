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
#include <memory>
#include <string>

#include "base/expects.hpp"
#include "base/timer.hpp"
#include "core/builtin_engines.hpp"
#include "cpu/grid_join.hpp"
#include "grid/plan.hpp"

namespace epsjoin::detail {

namespace {

using cpu::cpu_grid_params;

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

// Host bytes of a point set the caller holds (none on a device).
std::uint64_t points_bytes(const dataset_view& v) {
  if (v.on_device()) return 0;
  return std::uint64_t{v.n} * v.d * (v.type == scalar_type::f32 ? sizeof(float) : sizeof(double));
}

// Whether float32 copies (centred on B's column midpoints) of every coordinate are finite.
bool fits_float(const join_request& req, const grid::column_stats& data_stats, unsigned threads) {
  const std::vector<double> center = cpu::column_centers(data_stats);
  if (!cpu::fits_float(data_stats, center)) return false;
  return req.self_join ||
         cpu::fits_float(grid::compute_column_stats(req.queries, threads), center);
}

// One join: B's side built at the join's eps, then the join against it.
template <class T, distance_metric M = distance_metric::euclidean>
void run_precision(join_request& req, const cpu_grid_params& params, const grid::column_stats& cstats,
                   join_stats& stats, const host_need& given) {
  stopwatch clock;
  const dataset_view data = req.self_join ? req.queries : req.data;
  // The whole path is required of the budget before its first allocation, and charged as made.
  cpu::side_budget budget{&req.budget, {given},
                          cpu::join_needs<T>(req, params, cpu::grid_by_column(data.d, params)),
                          !req.sink.request().counts_only()};
  const cpu::grid_side<T> side = cpu::build_grid_side<T>(data, cstats, req.options.eps, params,
                                                         std::max(1u, req.res.threads()), &budget);
  stats.add_stage("index", clock.seconds());
  cpu::join_against_side<T, M>(req, params, side, stats);
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
  // Counts a share of its tasks (grid_schedule.hpp), cut alike whatever the thread count.
  bool shares_work_items() const override { return true; }
  void run(join_request& req) const override {
    const cpu_grid_params& params = req.params_as<cpu_grid_params>();
    const unsigned threads = std::max(1u, req.res.threads());
    stopwatch clock;
    const dataset_view data = req.self_join ? req.queries : req.data;
    const grid::column_stats cstats = grid::compute_column_stats(data, threads);
    req.stats.add_stage("index", clock.seconds());
    // The points the caller gave are held through the whole join: the process holds them and
    // its limit bounds it, so they are in the budget with what the join makes.
    const host_need given{req.self_join ? "the points given" : "the points given (both sets)",
                          points_bytes(req.queries) + (req.self_join ? 0 : points_bytes(req.data))};
    const host_charge given_charge = req.budget.account_host(given.bytes);
    if (req.options.metric != distance_metric::euclidean) {
      if (req.options.precision == scalar_type::f32) {
        req.stats.notes.emplace_back("precision", concat("float64: ", to_string(req.options.metric),
                                                         " is computed in float64"));
      }
      if (req.options.metric == distance_metric::manhattan) {
        run_precision<double, distance_metric::manhattan>(req, params, cstats, req.stats, given);
      } else {
        run_precision<double, distance_metric::chebyshev>(req, params, cstats, req.stats, given);
      }
      return;
    }
    if (req.options.precision == scalar_type::f32) {
      if (fits_float(req, cstats, threads)) {
        run_precision<float>(req, params, cstats, req.stats, given);
        return;
      }
      req.stats.notes.emplace_back("precision", "float64: coordinates exceed the float32 range");
    }
    run_precision<double>(req, params, cstats, req.stats, given);
  }
};

}  // namespace

std::unique_ptr<engine> make_cpu_grid_engine() { return std::make_unique<cpu_grid>(); }

}  // namespace epsjoin::detail
