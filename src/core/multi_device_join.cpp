#include "core/multi_device_join.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "base/cuda_part.hpp"
#include "base/expects.hpp"
#include "base/fresh_array.hpp"
#include "base/parallel.hpp"
#include "base/timer.hpp"
#include "core/device_shards.hpp"
#include "core/gather_rows.hpp"
#include "core/partition_detail.hpp"
#include "core/range_rows.hpp"
#include "core/row_subset_sink.hpp"
#include "core/shard_rows.hpp"
#include "core/shard_table.hpp"
#include "epsjoin/partition.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

namespace {

struct shard {
  resources* res = nullptr;
  fresh_array<std::uint32_t> ids;  // local query id -> caller's id, own points first
  std::size_t own = 0;
  fresh_array<char> point_bytes;  // the shard's copy of its queries (and, self-join, data)
  dataset_view points;
  std::unique_ptr<row_subset_sink> sink;
  std::unique_ptr<range_rows_sink> run_sink;  // a run of the queries, instead of `sink`
  join_stats stats;
  std::uint64_t pairs = 0;
  double seconds = 0;
  std::exception_ptr failure;
};

std::string join_ids(const std::vector<int>& devices) {
  std::string text;
  for (int d : devices) {
    if (!text.empty()) text += ',';
    text += std::to_string(d);
  }
  return text;
}

// Cuts a self-join's points into one box a shard, each with its halo, as `plan` says.
void cut_boxes(join_request& request, const partition_plan& plan, std::vector<shard>& shards,
               unsigned threads) {
  // Each box's own points and then its halo, in one array: the shard's ids.
  std::size_t halo = 0;
  assign_points_to(plan.partition, request.data, threads,
                   [&](std::size_t g, std::uint64_t own, std::uint64_t box_halo) {
                     shard& s = shards[g];
                     s.own = own;
                     s.ids = fresh_array<std::uint32_t>(own + box_halo);
                     halo += box_halo;
                     return member_arrays{s.ids.data(), s.ids.data() + own};
                   });
  join_stats& stats = request.stats;
  stats.notes.emplace_back("devices_cut", concat("coordinate ", plan.partition.dim, " at ",
                                                 plan.partition.splits.size(), " cuts"));
  stats.notes.emplace_back("devices_halo_points", std::to_string(halo));
  stats.notes.emplace_back("devices_halo_fraction",
                           concat(static_cast<double>(halo) /
                                  static_cast<double>(std::max<std::size_t>(1, request.data.n))));
}

// Deals an A x B join's queries out round-robin.
void deal_queries(const join_request& request, std::vector<shard>& shards) {
  const std::size_t n = request.queries.n, g_count = shards.size();
  for (std::size_t g = 0; g < g_count; ++g) {
    shard& s = shards[g];
    s.own = n / g_count + (g < n % g_count ? 1 : 0);
    s.ids = fresh_array<std::uint32_t>(s.own);
    for (std::size_t a = 0; a < s.own; ++a)
      s.ids.data()[a] = static_cast<std::uint32_t>(g + a * g_count);
  }
}

// Every device ran the whole join and counted its share of the items: each must have said so,
// and all must have built the same items, or the shares did not add up to the join.
void check_shares(const std::vector<work_share>& shares) {
  for (const work_share& share : shares) {
    EPSJOIN_ENSURE(share.honoured, error,
                   "internal: a device counted every work item instead of its share");
    EPSJOIN_ENSURE(
        share.items == shares.front().items && share.candidates == shares.front().candidates, error,
        "internal: the devices built different work items (", share.items, " items, ",
        share.candidates, " candidates against ", shares.front().items, ", ",
        shares.front().candidates, ")");
  }
}

void report(join_request& request, const std::vector<shard>& shards, bool by_items,
            const range_table* runs) {
  join_stats& stats = request.stats;
  double slowest = 0, sum = 0;
  std::string per_device;
  for (std::size_t g = 0; g < shards.size(); ++g) {
    const shard& s = shards[g];
    // Sharing items, every device found the whole join's candidates and computed its share.
    stats.candidates = by_items ? s.stats.candidates : stats.candidates + s.stats.candidates;
    stats.h2d_point_bytes += s.stats.h2d_point_bytes;
    slowest = std::max(slowest, s.seconds);
    sum += s.seconds;
    const std::string work =
        by_items ? concat("items ", g, " + ", shards.size(), "k")
        : runs   ? concat("queries ", runs->first_query(g), " to ",
                          runs->first_query(g) + runs->queries(g), " against all")
                 : concat(s.own, " points + ", s.ids.size() - s.own, " halo");
    per_device += concat(g == 0 ? "" : "; ", "device ", request.res.devices()[g], ": ", work, ", ",
                         s.pairs, " pairs, ", s.seconds, " s");
    // Each device's own stages, and what its wall time holds beside them (the engine's set-up,
    // allocations and frees), so that a slow device says where its time went. In the join's
    // stages the slowest device's make up the wall time: each stage keeps its longest.
    double staged = 0;
    for (const stage_time& t : s.stats.stages) {
      per_device += concat(&t == &s.stats.stages.front() ? " (" : ", ", t.name, " ", t.seconds);
      staged += t.seconds;
      auto it = std::find_if(stats.stages.begin(), stats.stages.end(),
                             [&](const stage_time& have) { return have.name == t.name; });
      if (it == stats.stages.end()) {
        stats.stages.push_back(t);
      } else {
        it->seconds = std::max(it->seconds, t.seconds);
      }
    }
    if (!s.stats.stages.empty()) per_device += concat(", unstaged ", s.seconds - staged, ")");
  }
  const double mean = sum / static_cast<double>(shards.size());
  stats.notes.emplace_back("devices", join_ids(request.res.devices()));
  stats.notes.emplace_back("devices_work", per_device);
  stats.notes.emplace_back("devices_imbalance", concat(mean > 0 ? (slowest - mean) / mean : 0.0));
  // The first device's engine notes stand for all (the same engine and settings on each).
  for (const auto& note : shards.front().stats.notes) stats.notes.push_back(note);
}

// Runs of the queries [firsts[g], firsts[g + 1]), one a device, of like length.
std::vector<std::size_t> query_runs(std::size_t n_queries, std::size_t devices) {
  std::vector<std::size_t> firsts(devices + 1);
  for (std::size_t g = 0; g <= devices; ++g) firsts[g] = n_queries * g / devices;
  return firsts;
}

dataset_view rows_of(dataset_view points, std::size_t first, std::size_t n) {
  points.data = static_cast<const char*>(points.data) + first * points.d * size_of(points.type);
  points.n = n;
  return points;
}

// Device g's run of the queries against all the points (`all`: the caller's data, or its copy
// on the device), its rows handed on where they lie in the table (core/range_rows.hpp).
void join_query_run(const engine& e, join_request& request, shard& s, range_table& runs,
                    std::size_t g, dataset_view all, std::function<void(double)> progress,
                    const memory_limits& limits, unsigned threads) {
  const dataset_view caller_queries = request.self_join ? all : request.queries;
  s.points = rows_of(caller_queries, runs.first_query(g), runs.queries(g));
  const dataset_view data = request.self_join ? all : request.data;
  join_options options = request.options;
  options.include_self = false;  // dispatch adds them, once, for the caller's ids
  options.progress = std::move(progress);
  s.stats.self_join = false;
  s.run_sink = std::make_unique<range_rows_sink>(runs, g, data.n, request.self_join, threads);
  join_request sub{*s.res,  s.points, data,          false, options, *s.run_sink, s.stats,
                   memory_budget(limits, request.budget.overrides()), request.params};
  s.run_sink->set_budget(sub.budget);
  if (s.points.n > 0 && data.n > 0) e.run(sub);
  s.run_sink->finish();
}

}  // namespace

namespace {

// Gives each shard its part of the join as `split` divides it, with the notes that say so.
void divide(join_request& request, const device_split_choice& split, std::vector<shard>& shards,
            std::vector<work_share>& item_shares, std::optional<range_table>& runs,
            unsigned threads) {
  const std::size_t n_shards = shards.size();
  switch (split.division) {
    case device_division::work_items:
      for (std::size_t g = 0; g < n_shards; ++g) {
        shards[g].own = request.queries.n;
        item_shares[g] = {static_cast<unsigned>(g), static_cast<unsigned>(n_shards)};
      }
      request.stats.notes.emplace_back(
          "devices_split",
          concat("work items: every device indexes all the points and counts one item in "
                 "every ",
                 n_shards, " of the workload order"));
      return;
    case device_division::query_runs:
      runs.emplace(request.sink, query_runs(request.queries.n, n_shards));
      request.stats.notes.emplace_back(
          "devices_split", "query runs: every device joins one run of the queries against all "
                           "the points and writes its rows where they lie in the table");
      return;
    case device_division::slabs:
      return cut_boxes(request, *split.plan, shards, threads);
    case device_division::dealt:
    case device_division::one_device:
      return deal_queries(request, shards);
  }
}

// Sharing items or runs of a self-join, every device joins all the points: one upload split over
// the devices and peer copies for the rest, rather than every device uploading everything
// (bench/peer_copy: 1 GiB to four H100s in 9 ms so, 24 ms from pinned and 0.49 s from pageable
// memory each). The copies stay for the whole join: the engines plan within what the device
// memory limit leaves beside them (`limits`, lowered here and set on every shard).
std::optional<device_replicas> replicate_points(join_request& request, std::vector<shard>& shards,
                                                memory_limits& limits, std::size_t row_bytes) {
  stopwatch copies;
  std::vector<resources*> shard_resources;
  for (const shard& s : shards) shard_resources.push_back(s.res);
  const std::uint64_t copy_bytes = request.data.n * row_bytes;  // a self-join: data = queries
  if (limits.device_bytes != 0) {
    EPSJOIN_ENSURE(limits.device_bytes > copy_bytes, out_of_memory, "the device memory limit (",
                   limits.device_bytes,
                   " bytes) leaves no room beside each device's copy of the points (", copy_bytes,
                   " bytes)");
    limits.device_bytes -= copy_bytes;
    for (shard& s : shards) s.res->set_memory(limits);
  }
  device_replicas replicas = replicate_to_devices(shard_resources, request.data);
  request.stats.h2d_point_bytes += replicas.h2d_bytes;
  request.stats.add_stage("devices' copies of the points", copies.seconds());
  request.stats.notes.emplace_back(
      "devices_points", concat("uploaded once, a run of rows to each device, the rest copied "
                               "between the devices"));
  return replicas;
}

// What every shard's thread reads.
struct shard_context {
  const engine& e;
  join_request& request;
  bool by_items;
  std::vector<work_share>& item_shares;
  std::optional<shard_table>& table;
  std::optional<range_table>& runs;
  const std::optional<device_replicas>& replicas;
  shared_progress& progress;
  const memory_limits& limits;
  unsigned threads;
};

// Device g's share of a join divided by items, slabs or dealt queries, through a row_subset_sink
// that hands its rows and pairs on with the caller's ids.
void join_shard(const shard_context& c, shard& s, std::size_t g) {
  join_request& request = c.request;
  stopwatch clock;
  if (c.replicas) {
    s.points = c.replicas->views[g];
  } else if (c.by_items) {
    s.points = request.queries;
  } else {
    s.points = gather_rows(request.queries, s.ids.span(), c.threads, s.point_bytes);
    s.stats.add_stage("slab gather", clock.seconds());
  }
  join_options options = request.options;
  options.include_self = false;  // dispatch adds them, once, for the caller's ids
  options.progress = c.progress.part(g);
  const std::span<const std::uint32_t> no_ids;
  // Ids are the caller's on every shard, so an unordered pair is kept on one shard only.
  s.sink = std::make_unique<row_subset_sink>(
      request.sink, s.ids.span(), s.own, request.self_join ? s.ids.span() : no_ids,
      row_subset_sink::options{.unordered = request.self_join && !c.by_items,
                               .threads = c.threads,
                               .table = c.table ? &*c.table : nullptr});
  s.stats.self_join = request.self_join;
  join_request sub{*s.res,
                   s.points,
                   request.self_join ? s.points : request.data,
                   request.self_join,
                   options,
                   *s.sink,
                   s.stats,
                   memory_budget(c.limits, request.budget.overrides()),
                   request.params};
  s.sink->set_budget(sub.budget);
  if (c.by_items) sub.item_share = &c.item_shares[g];
  if (c.table && request.self_join) sub.caller_ids = s.ids.span();
  if (s.points.n > 0 && sub.data.n > 0) c.e.run(sub);
  stopwatch ids_clock;
  s.sink->finish_in_place(sub.caller_ids_written);
  if (c.table && c.table->laid_out() && !sub.caller_ids_written) {
    s.stats.add_stage("rows' ids to the caller's", ids_clock.seconds());
  }
  s.seconds = clock.seconds();
}

// Device g's part; a failure is kept for the caller's thread and stops the other devices.
void run_shard(const shard_context& c, std::vector<shard>& shards, std::size_t g) {
  shard& s = shards[g];
  try {
    if (c.runs) {
      stopwatch clock;
      join_query_run(c.e, c.request, s, *c.runs, g,
                     c.replicas ? c.replicas->views[g] : c.request.data, c.progress.part(g),
                     c.limits, c.threads);
      s.seconds = clock.seconds();
    } else {
      join_shard(c, s, g);
    }
  } catch (...) {
    s.failure = std::current_exception();
    c.progress.stop();
    if (c.table) c.table->abandon();
    if (c.runs) c.runs->abandon();
  }
}

// Rethrows the first device's failure that is a cause: not another device's failure or the
// caller's stop, which only stopped it.
void rethrow_first_cause(const std::vector<shard>& shards) {
  for (const shard& s : shards) {
    if (!s.failure) continue;
    try {
      std::rethrow_exception(s.failure);
    } catch (const stopped_elsewhere&) {
    } catch (...) {
      std::rethrow_exception(s.failure);
    }
  }
}

}  // namespace

void run_on_devices(const engine& e, join_request& request) {
  resources& res = request.res;
  const std::size_t n_shards = res.devices().size();
  const unsigned threads = res.threads();
  const unsigned shard_threads = std::max(1u, threads / static_cast<unsigned>(n_shards));
  stopwatch clock;
  const device_split_choice split = choose_device_split(e, request, n_shards, threads);
  if (split.division == device_division::one_device) return e.run(request);
  const bool by_items = split.division == device_division::work_items;
  const bool by_runs = split.division == device_division::query_runs;

  std::vector<shard> shards(n_shards);
  std::vector<work_share> item_shares(by_items ? n_shards : 0);
  std::optional<range_table> runs;
  divide(request, split, shards, item_shares, runs, threads);
  std::uint64_t copied_bytes = 0;
  const std::size_t row_bytes = request.queries.d * size_of(request.queries.type);
  for (const shard& s : shards) copied_bytes += s.ids.size() * (row_bytes + sizeof(std::uint32_t));
  if (!by_items) {
    request.budget.require_host(copied_bytes, "the devices' copies of their points");
    // The sample's join has its own stage: this one is the rest (cuts, assignment, the budget).
    request.stats.add_stage("partition", clock.seconds() - split.sample_seconds);
  }

  // Each device plans within its share of the host memory; device memory is each its own.
  const memory_limits caller_limits = res.memory();
  memory_limits shard_limits = caller_limits;
  shard_limits.host_bytes = request.budget.host_bytes() / n_shards;
  settings_restorer restore(res);
  for (std::size_t g = 0; g < n_shards; ++g) {
    shards[g].res = g == 0 ? &res : &res.peer(g);
    shards[g].res->set_threads(shard_threads);
    shards[g].res->set_memory(shard_limits);
  }
  shared_progress progress(request.options.progress, n_shards);
  // Rows go straight into the caller's table where it takes them in place. A sink that takes
  // blocks of rows is not mapped (a CSR file mapped and faulted in by every device took 9.1 s of
  // an 11.4 s join, 100M points at S 50): it gets query runs (above), or, where it takes blocks
  // in query order only (row_block_sink, a stream), the gathered delivery.
  const sink_request wanted = request.sink.request();
  std::optional<shard_table> table;
  if (!by_items && !by_runs && wanted.rows_in_place && !wanted.counts_only() &&
      !wanted.row_blocks) {
    table.emplace(request.sink, request.queries.n, n_shards);
  }
  std::optional<device_replicas> replicas;
  if ((by_items || by_runs) && request.self_join && e.reads_device_points() &&
      request.data.n > 0) {
    replicas = replicate_points(request, shards, shard_limits, row_bytes);
  }

  const shard_context context{e,     request,  by_items, item_shares,  table,
                              runs,  replicas, progress, shard_limits, shard_threads};
  {
    std::vector<std::thread> others;
    for (std::size_t g = 1; g < n_shards; ++g) {
      others.emplace_back([&context, &shards, g] { run_shard(context, shards, g); });
    }
    run_shard(context, shards, 0);
    for (std::thread& t : others) t.join();
  }
  res.set_memory(caller_limits);
  rethrow_first_cause(shards);
  if (by_items && request.queries.n > 0 && request.data.n > 0) check_shares(item_shares);
  if (runs) {
    for (shard& s : shards) s.pairs = s.run_sink->pairs();
    report(request, shards, by_items, &*runs);
    return;
  }
  stopwatch rows_clock;
  std::vector<shard_rows> rows;
  for (const shard& s : shards) rows.push_back({s.sink.get(), s.ids.span(), s.own});
  deliver_shard_rows(request, rows, threads);
  for (shard& s : shards) s.pairs = s.sink->pairs();
  if (rows_clock.seconds() > 1e-3) {
    request.stats.add_stage("devices' rows to the table", rows_clock.seconds());
  }
  report(request, shards, by_items, nullptr);
}

}  // namespace epsjoin::detail
