// cpu-grid's join in two halves (see grid_join.hpp): the indexed side built at a radius, and
// the join of one request against it.

#include "cpu/grid_join.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <optional>
#include <span>

#include "base/cpu_isa.hpp"
#include "base/expects.hpp"
#include "base/float_band.hpp"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/progress.hpp"
#include "base/timer.hpp"
#include "core/delivery.hpp"
#include "core/row_cursors.hpp"
#include "core/row_scatter.hpp"
#include "cpu/grid_dispatch.hpp"

namespace epsjoin::detail::cpu {

namespace {

// Measured (one thread, 2-core machine, bench/RESULTS.md "CPU delivery"): the halved fill
// computes half the distances but writes the other side of every pair into a row elsewhere in
// the table. On the real 50k samples (10 MB tables) and Expo2D 2M it ties FULL; on uniform 2-D
// 2M at S 50 (a 400 MB table, ids in random order) it took 1.4x FULL's time (0.91-0.95 s of
// user time against 0.68-0.71 s): there the scattered stores cost more than the distances saved.
constexpr std::uint64_t halved_fill_max_bytes = std::uint64_t{64} << 20;

const char* pattern_name(grid::access_pattern p) {
  switch (p) {
    case grid::access_pattern::full: return "full";
    case grid::access_pattern::unicomp: return "unicomp";
    case grid::access_pattern::lid_unicomp: return "lid-unicomp";
  }
  return "?";
}

}  // namespace

std::vector<double> column_centers(const grid::column_stats& stats) {
  std::vector<double> center(stats.min.size(), 0.0);
  for (std::size_t j = 0; j < center.size(); ++j) center[j] = 0.5 * (stats.min[j] + stats.max[j]);
  return center;
}

bool fits_float(const grid::column_stats& stats, const std::vector<double>& center) {
  for (std::size_t j = 0; j < stats.min.size(); ++j) {
    const double c = center[j];
    if (!(std::max(c - stats.min[j], stats.max[j] - c) < 0x1p127)) return false;
  }
  return true;
}

bool grid_by_column(std::size_t d, const cpu_grid_params& params) {
  // Columns for d <= 8 unless rows are asked for (columns cannot hold more dimensions).
  return d <= soa_max_dims && params.layout != cpu_grid_params::layout_kind::rows;
}

namespace {

// Host bytes a grid index keeps per non-empty cell (its id and first point), and what a join's
// schedule keeps per cell (its ranges' place, a task or more): the schedule is planned later,
// from the cells, and charged then at its true size.
constexpr std::uint64_t index_bytes_per_cell = sizeof(std::uint64_t) + sizeof(std::uint32_t);
constexpr std::uint64_t schedule_bytes_per_cell = 2 * sizeof(std::uint32_t) + sizeof(grid_task);

std::uint64_t sum_of(const std::vector<host_need>& needs) {
  std::uint64_t sum = 0;
  for (const host_need& n : needs) sum += n.bytes;
  return sum;
}

// The peak of the path: the sort that builds the index, or the index and the block with what
// the join holds beside them, whichever is more; the points given are held throughout.
void require_side(const side_budget& b, std::uint64_t sort, std::uint64_t index,
                  std::uint64_t block, std::uint64_t held_index, bool at_least) {
  std::vector<host_need> needs = b.held;
  const std::uint64_t after = sum_of(b.after);
  if (sort + index > index + block + after) {
    needs.push_back({"sorting the points into cells", sort + index});
  } else {
    needs.push_back({"the grid index and its schedule", index});
    needs.push_back({"the points in cell order", block});
    needs.insert(needs.end(), b.after.begin(), b.after.end());
  }
  b.budget->require_path(needs, sum_of(b.held) + held_index, at_least);
}

}  // namespace

template <class T>
std::vector<host_need> join_needs(const join_request& req, const cpu_grid_params& params,
                                  bool by_column) {
  const std::uint64_t n = req.queries.n;
  const delivery out(req.sink, 1, req.self_join && params.pattern != grid::access_pattern::full);
  std::vector<host_need> needs;
  if (!req.self_join) {
    needs.push_back({"the query points in cell order and their index",
                     block_bytes<T>(n, req.queries.d, by_column) + n * sizeof(std::uint32_t)});
  }
  if (out.form() == delivery_form::counts) {
    needs.push_back({"the counts", n * sizeof(std::uint32_t)});
  } else if (out.form() == delivery_form::rows) {
    // Counted by position, then by query; filled halved (the counts by position and a cursor
    // a row) or under FULL (the counts by query and a row scatter's spans): the costlier of the
    // two unless the fill is fixed, since the table's size, which decides under fill=auto, is
    // known only after the count.
    const bool only_halved = req.self_join && params.pattern != grid::access_pattern::full &&
                             params.fill == cpu_grid_params::fill_kind::halved;
    needs.push_back({"the counts", n * sizeof(std::uint32_t)});
    needs.push_back({"the row cursors", only_halved ? row_cursors::bytes_for(n)
                                                    : row_scatter_sink::bytes_for(n)});
  }
  return needs;
}

template <class T>
grid_side<T> build_grid_side(dataset_view data, grid::column_stats stats, double eps,
                             const cpu_grid_params& params, unsigned threads,
                             const side_budget* budget) {
  grid_side<T> side;
  side.eps = eps;
  side.input = data;
  grid::plan_options popt;
  popt.eps = eps;
  popt.max_k = params.max_k;
  popt.reorder = params.reorder;
  side.plan = grid::plan_grid(stats, popt);
  grid::build_options bopt;
  bopt.threads = threads;
  bopt.copy_points = false;  // the engine keeps its own layout, below
  bopt.masks = params.masks;
  const bool by_column = grid_by_column(data.d, params);
  const std::uint64_t permutation = data.n * sizeof(std::uint32_t);
  const std::uint64_t block = block_bytes<T>(data.n, data.d, by_column);
  const std::uint64_t sort = grid::sort_bytes(data.n, side.plan.geo);
  auto charge = [&](std::uint64_t bytes, const char* what) {
    return budget->bounded ? budget->budget->charge_host(bytes, what)
                           : budget->budget->account_host(bytes);
  };
  if (budget != nullptr) {
    // Before anything is allocated. The non-empty cells are known only after the sort: a grid of
    // at most n cells is taken as full (the common case, and an upper bound); past n the cells
    // count for nothing here, and the figure is a lower bound the check below completes.
    const std::uint64_t total_cells = side.plan.geo.total_cells;
    const bool cells_bounded = total_cells <= data.n;
    const std::uint64_t cells_at_most =
        cells_bounded ? total_cells * (index_bytes_per_cell + schedule_bytes_per_cell) : 0;
    if (budget->bounded) {
      require_side(*budget, sort, permutation + cells_at_most, block, 0, !cells_bounded);
    }
    side.charges.push_back(charge(permutation, "the grid index"));
    if (budget->bounded) bopt.budget = budget->budget;
  }
  side.index =
      grid::build_host_index(data, side.plan.geo, side.plan.dim_order, bopt, &side.timings);
  if (budget != nullptr) {
    // Again with the cells, before the block: a grid of many cells has a large schedule too.
    const std::uint64_t cells = side.index.n_cells() * index_bytes_per_cell;
    if (budget->bounded) {
      require_side(*budget, 0,
                   permutation + cells + side.index.n_cells() * schedule_bytes_per_cell, block,
                   permutation, false);
    }
    side.charges.push_back(charge(cells, "the grid's cells"));
    side.charges.push_back(charge(block, "the points in cell order"));
  }
  side.center = column_centers(stats);
  side.block = gather_block<T>(data, side.index.permutation, side.plan.dim_order, side.center,
                               by_column, threads);
  side.stats = std::move(stats);
  return side;
}

template <class T, distance_metric M>
void join_against_side(join_request& req, const cpu_grid_params& params, const grid_side<T>& side,
                       join_stats& stats) {
  EPSJOIN_ENSURE(req.options.eps <= side.eps, error, "internal: a join at eps ", req.options.eps,
                 " against a grid built for ", side.eps);
  stopwatch clock;
  const unsigned threads = std::max(1u, req.res.threads());
  const bool self = req.self_join;
  const dataset_view data = side.input;
  const grid::grid_plan& plan = side.plan;
  const grid::host_index& data_index = side.index;
  const point_block<T>& dblock = side.block;
  const bool by_column = dblock.by_column;
  grid::build_timings bt = side.timings;
  // A count of the pairs fits any limit by recomputing (stored ranges, per-thread counts): its
  // memory is counted in the budget, not refused.
  const bool bounded = !req.sink.request().counts_only();
  auto charge = [&](std::uint64_t bytes, const char* what) {
    return bounded ? req.budget.charge_host(bytes, what) : req.budget.account_host(bytes);
  };
  std::unique_ptr<grid::host_index> query_index;
  point_block<T> qblock_own;
  std::vector<host_charge> query_charges;
  if (!self) {
    grid::build_options bopt;
    bopt.threads = threads;
    bopt.copy_points = false;
    bopt.masks = false;
    if (bounded) bopt.budget = &req.budget;
    query_charges.push_back(
        charge(req.queries.n * sizeof(std::uint32_t), "the query points' index"));
    query_charges.push_back(charge(
        block_bytes<T>(req.queries.n, req.queries.d, by_column), "the query points in cell order"));
    query_index = std::make_unique<grid::host_index>(
        grid::build_host_index(req.queries, plan.geo, plan.dim_order, bopt, &bt));
    qblock_own = gather_block<T>(req.queries, query_index->permutation, plan.dim_order,
                                 side.center, by_column, threads);
  }
  const grid::host_index& queries = self ? data_index : *query_index;
  const point_block<T>& qblock = self ? dblock : qblock_own;
  stats.add_stage("index", clock.seconds());
  clock.restart();

  // One pass over a schedule of `pattern`: counts by position (counts mode), pairs to the sink,
  // or each query's row written in place (`rows`, FULL pattern only: a query's task owns its row).
  struct pass_result {
    std::vector<std::uint32_t> counts;
    host_charge counts_charge;  // the counts' bytes in the budget, while they live
    std::uint64_t candidates = 0, rechecks = 0, gathered = 0;
    std::size_t tasks = 0, stored_ranges = 0;
    bool avx2 = false;
  };
  // A halved self-join finds each pair once: a sink that keeps unordered pairs gets each once.
  const delivery out(req.sink, threads, self && params.pattern != grid::access_pattern::full);
  // Rows carry their distances, written as each neighbour is found, where the sink wants them
  // and the cell-ordered copies hold the caller's values exactly (float32 rounded from float64
  // input is not): the sink computes them afterwards otherwise, from the caller's points.
  const bool rows_with_distances =
      M == distance_metric::euclidean && out.wants_distances() &&
      (std::is_same_v<T, double> ||
       (req.queries.type == scalar_type::f32 && data.type == scalar_type::f32));
  std::vector<int> column_of_dim(plan.dim_order.size());
  for (std::size_t j = 0; j < plan.dim_order.size(); ++j) {
    column_of_dim[static_cast<std::size_t>(plan.dim_order[j])] = static_cast<int>(j);
  }
  // Progress: a pass reports from 0 to 1; `span` places it within the whole join.
  const auto shown = std::make_shared<std::atomic<double>>(0.0);
  std::optional<grid_schedule> planned;
  host_charge planned_charge;
  // What the join charges after its first schedule (its counts, its row cursors): the ranges a
  // schedule stores for speed leave it room.
  std::uint64_t still_needed = 0;
  for (const host_need& n : join_needs<T>(req, params, by_column)) still_needed += n.bytes;
  if (!self) still_needed -= query_charges[0].bytes() + query_charges[1].bytes();
  grid::access_pattern planned_pattern = grid::access_pattern::full;
  auto run_pass = [&](grid::access_pattern pattern, bool count_only, row_scatter_sink* rows,
                      const row_cursors* shared, double span_begin,
                      double span_end) -> pass_result {
    join_options pass_options = req.options;
    pass_options.progress = progress_span(req.options.progress, span_begin, span_end, shown);
    join_request pass_req{req.res,  req.queries, req.data,  req.self_join, pass_options,
                          req.sink, req.stats,   req.budget, req.params};
    plan_settings settings;
    // Stored ranges are for speed only: within the scratch share and what the budget has left
    // once the join's later needs are set aside.
    const std::uint64_t left = req.budget.host_available();
    settings.range_budget_bytes =
        std::min(req.budget.host_scratch_bytes(), left > still_needed ? left - still_needed : 0);
    settings.halved = self && pattern != grid::access_pattern::full;
    settings.pattern = self ? pattern : grid::access_pattern::full;
    settings.lookup = params.lookup;
    settings.use_masks = params.masks;
    settings.threads = threads;
    if (req.item_share != nullptr) {
      EPSJOIN_ENSURE(count_only && rows == nullptr && shared == nullptr, error,
                     "internal: a share of the work items is counted only");
      settings.share_index = req.item_share->index;
      settings.share_count = req.item_share->count;
    }
    // A fill under the count's pattern runs the count's schedule again: planning it (finding
    // every cell's neighbour ranges) costs as much as a sparse join's distances.
    if (!planned || planned_pattern != settings.pattern) {
      planned.reset();
      planned_charge = {};
      planned.emplace(plan_schedule(queries, data_index, settings));
      planned_pattern = settings.pattern;
      planned_charge = charge(planned->bytes(), "the schedule");
      still_needed = 0;
    }
    const grid_schedule& schedule = *planned;

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
      in.limit = float_thresholds(req.options.eps, data.d, dblock.rounding, qblock.rounding);
    } else {
      in.limit = double_thresholds(req.options.eps, data.d);
    }
    in.skip_self = self && !settings.halved;
    in.avx2 = params.avx2 && isa::cpu_has_v3();
    in.gather_min_spans = params.gather_min_spans;
    in.column_of_dim = column_of_dim.data();
    pass_result result;
    std::vector<std::uint32_t>& counts = result.counts;
    std::vector<std::vector<std::uint32_t>> private_counts;
    std::vector<worker_state<T>> workers(threads);
    host_charge private_charge;
    if (count_only) {
      result.counts_charge = charge(queries.n_points() * sizeof(std::uint32_t), "the counts");
      counts.assign(queries.n_points(), 0);
      in.counts = counts.data();
      // A halved join counts both sides of a pair, the candidate's in cells other threads may be
      // counting too: a private array per thread when they fit (the scratch share, and what the
      // budget has left: they are for speed only), atomic adds otherwise.
      const std::uint64_t private_bytes = std::uint64_t{threads} * queries.n_points() * 4;
      if (settings.halved && threads > 1 && private_bytes <= req.budget.host_scratch_bytes() &&
          private_bytes <= req.budget.host_available()) {
        private_charge = req.budget.charge_host(private_bytes, "the per-thread counts");
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
      execute_columns<T, M>(pass_req, in, settings.halved, qblock, dblock, workers);
    } else {
      execute_rows<T, M>(pass_req, in, settings.halved, qblock, dblock, params.early_exit,
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
    if (req.item_share != nullptr) {
      req.item_share->honoured = true;
      req.item_share->items = schedule.all_tasks;
      req.item_share->candidates = schedule.all_work;
    }
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
    host_charge by_query_charge =
        req.budget.charge_host(req.queries.n * sizeof(std::uint32_t), "the counts by query");
    std::vector<std::uint32_t> by_query(req.queries.n, 0);
    parallel_for(threads, counted.counts.size(), std::size_t{1} << 16,
                 [&](std::size_t begin, std::size_t end, unsigned) {
      for (std::size_t p = begin; p < end; ++p) by_query[queries.permutation[p]] = counted.counts[p];
    });
    stats.add_stage("count", clock.seconds());
    clock.restart();
    std::uint64_t table_pairs = 0;
    for (const std::uint32_t c : counted.counts) table_pairs += c;
    // Distances are written by the FULL fill, whose task writes its query's whole row.
    const bool halved =
        self && params.pattern != grid::access_pattern::full && !rows_with_distances &&
        (params.fill == cpu_grid_params::fill_kind::halved ||
         (params.fill == cpu_grid_params::fill_kind::automatic &&
          table_pairs * sizeof(std::uint32_t) <= halved_fill_max_bytes));
    delivery rows_out(req.sink, threads);
    const row_destination dest = rows_out.lay_out(by_query, rows_with_distances && !halved);
    if (halved) {
      by_query = {};
      by_query_charge = {};
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
      counted.counts_charge = {};
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
    if (out.wants_distances()) {
      stats.notes.emplace_back("distances", rows_with_distances
                                                ? "with the rows"
                                                : "by the sink, after the rows (the cell-ordered "
                                                  "copy is rounded to float32)");
    }
  }
  candidates += last.candidates;
  rechecks += last.rechecks;

  stats.candidates += candidates;
  stats.notes.emplace_back("grid", plan.reason);
  stats.notes.emplace_back("non-empty cells", std::to_string(data_index.n_cells()));
  stats.notes.emplace_back("pattern", pattern_note);
  if (req.item_share != nullptr) {
    stats.notes.emplace_back("work share", concat("tasks ", req.item_share->index, ", ",
                                                  req.item_share->index, " + ",
                                                  req.item_share->count, ", ... of ",
                                                  req.item_share->items, " (heaviest first)"));
  }
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

#define EPSJOIN_GRID_SIDE(T)                                                                     \
  template grid_side<T> build_grid_side<T>(dataset_view, grid::column_stats, double,           \
                                           const cpu_grid_params&, unsigned,                   \
                                           const side_budget*);                                \
  template std::vector<host_need> join_needs<T>(const join_request&, const cpu_grid_params&,   \
                                                bool);
EPSJOIN_GRID_SIDE(float)
EPSJOIN_GRID_SIDE(double)
#undef EPSJOIN_GRID_SIDE
template void join_against_side<float>(join_request&, const cpu_grid_params&,
                                       const grid_side<float>&, join_stats&);
#define EPSJOIN_GRID_JOIN(M)                                                                     \
  template void join_against_side<double, M>(join_request&, const cpu_grid_params&,            \
                                             const grid_side<double>&, join_stats&);
EPSJOIN_GRID_JOIN(distance_metric::euclidean)
EPSJOIN_GRID_JOIN(distance_metric::manhattan)
EPSJOIN_GRID_JOIN(distance_metric::chebyshev)
#undef EPSJOIN_GRID_JOIN

}  // namespace epsjoin::detail::cpu
