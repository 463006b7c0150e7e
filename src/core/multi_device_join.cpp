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

// A point's work in units of one pair (its gather, upload and index entry, its count or row
// delivered). Measured on 4 H100s, lbjoin counting the 100M-point coastline replica: 17 ns a
// point, 0.023 ns a pair.
constexpr double point_cost = 700;
// Where each row's count is wanted, the automatic split shares work items when slabs would put
// more than this fraction of the points in halos (measured: 0.01-0.03 in 2-D, where slabs won;
// 0.89 at 16-D, where items did).
constexpr double items_above_halo = 0.2;

// `--devices auto` spreads a counts-only self-join of at least this many points whose modelled
// time on one device is at least this long. Below, each further device's start (its index,
// threads, copies: 0.1-0.3 s) eats the gain: the 100M-point coastline count (1.6 s on one H100)
// gained 1.09x on two. Rows and pairs stay on one device: through several they were slower
// (CSR to host memory 0.44x on two H100s), their rows mapped into the caller's table afterwards.
constexpr std::size_t spread_min_points = 1'000'000;
constexpr double spread_min_seconds = 1.0;
// The decision's own sample: the model need only tell a second from tens of ms, and the cuts'
// sample (200,000 points at 2-D) took 44 ms of a 48 ms join that stayed on one device.
constexpr std::size_t decision_sample = 5000;

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

// The halo points `partition` would give, over the number of points (a point in the halo of two
// boxes counts twice), from at most `probes` points evenly spread through `points`.
double estimated_halo_fraction(const box_partition& partition, dataset_view points,
                               std::size_t probes, unsigned threads) {
  if (points.n == 0 || partition.boxes() < 2) return 0;
  const std::size_t step = std::max<std::size_t>(1, points.n / probes);
  const std::size_t n_probes = (points.n + step - 1) / step;
  std::atomic<std::uint64_t> halo{0};
  parallel_for(threads, n_probes, std::size_t{1} << 14,
               [&](std::size_t b, std::size_t e, unsigned) {
                 std::uint64_t mine = 0;
                 for (std::size_t k = b; k < e; ++k) {
                   const double x = points.at(k * step, partition.dim);
                   std::size_t first = 0, last = 0;
                   partition.halo_boxes(x, partition.box_of(x), first, last);
                   mine += last - first;
                 }
                 halo.fetch_add(mine, std::memory_order_relaxed);
               });
  return static_cast<double>(halo.load()) / static_cast<double>(n_probes);
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

double modelled_device_seconds(double work, std::size_t d) {
  // Seconds a unit of partition_plan::work (a pair; a point is 700) takes one H100, fitted on
  // the multi-GPU bench's one-GPU runs (bench/RESULTS.md): 0.009-0.014 ns at 2-D (lbjoin:
  // uniform 50M S 4976 and 200M S 500, the coastline 100M S 501), 1.1-1.8 ns at 16-D (meta-16q:
  // Expo16D 4M S 382 and 8M S 469). The grid indexes a few coordinates, so the candidates a pair
  // grow with d; between the two, geometrically; beyond 16-D the tensor-core engines take over
  // at about the 16-D cost. A coarse model: it only has to tell a second from a few hundred ms.
  constexpr double at_2d = 0.012e-9, per_dimension = 1.4;
  const double dims = static_cast<double>(std::clamp<std::size_t>(d, 2, 16));
  return work * at_2d * std::pow(per_dimension, dims - 2);
}

bool spreads_over_devices(const engine& e, const join_request& request) {
  const std::string_view processor = e.processor();
  const bool can = request.res.devices().size() > 1 && processor != "cpu" &&
                   request.device_rows == nullptr && !request.data.on_device() &&
                   !request.queries.on_device();
  if (!can || !request.res.devices_automatic()) return can;
  // Automatic: only a join that can gain is worth the sample that decides (run_on_devices).
  return request.self_join && request.sink.request().counts_only() &&
         request.data.n >= spread_min_points;
}

bool shares_items_across_devices(const engine& e, const join_request& request) {
  const bool can = request.sink.request().counts_only() && e.shares_work_items();
  // Automatic: A x B keeps dealing the queries out (each device indexes and delivers only its
  // share of them); a self-join's slabs are planned first and their halo decides.
  switch (request.res.split()) {
    case device_split::slabs:
      return false;
    case device_split::work_items:
      EPSJOIN_ENSURE(can, invalid_argument,
                     "the work-items split of several devices counts only (--format count) and "
                     "needs a row-join engine (lbjoin, gds-join, ted-join, meta-16q, meta-1q); "
                     "this join ",
                     request.sink.request().counts_only() ? "runs " : "wants pairs or rows from ",
                     e.name());
      return true;
    case device_split::automatic:
      break;
  }
  return can && request.self_join;
}

void run_on_devices(const engine& e, join_request& request) {
  resources& res = request.res;
  const std::size_t n_shards = res.devices().size();
  const unsigned threads = res.threads();
  const unsigned shard_threads = std::max(1u, threads / static_cast<unsigned>(n_shards));
  stopwatch clock;

  std::vector<shard> shards(n_shards);
  bool by_items = shares_items_across_devices(e, request);
  // A sink that keeps only the total: each device sums its counts where it counted them, so
  // sharing items leaves nothing on the host that grows with the devices, and no cut need be
  // planned (2-D, two H100s, uniform 50M S 4976: items 2.04x one device where slabs gave 1.63x;
  // 200M S 500: 1.42x against 0.86x, the cut and the gathers costing more than the count).
  const bool items_for_total = by_items && res.split() == device_split::automatic &&
                               request.sink.request().total_only_below().has_value();
  // A table to a sink that writes row blocks at their place (a CSR file): each device a run of
  // the queries against all the points, its rows one run of the table that it writes itself.
  // Slabs would scatter every device's rows through the table, to be gathered in query order
  // through host memory (14 GB peak for a 10 GB file through four H100s, 1.8 GB through one).
  const sink_request wanted = request.sink.request();
  const bool by_runs =
      !wanted.counts_only() && wanted.row_blocks && wanted.row_blocks_any_order;
  double sample_seconds = 0;
  std::optional<partition_plan> plan;
  if (res.devices_automatic() && request.self_join) {
    const partition_plan probe = plan_partition(res, request.data, request.options.eps, n_shards,
                                                decision_sample, point_cost);
    const double one_device = modelled_device_seconds(probe.work, request.data.d);
    const bool spread = one_device >= spread_min_seconds;
    request.stats.notes.emplace_back(
        "devices_auto", concat("about ", one_device, " s on one device (modelled from a sample): ",
                               spread ? "every device"
                                      : concat("device ", res.device(), " alone")));
    if (!spread) {
      request.stats.add_stage("devices decision", clock.seconds());
      e.run(request);
      return;
    }
  }
  if (items_for_total) {
    request.stats.notes.emplace_back(
        "devices_split_reason", "the total alone is wanted, summed on each device: work items");
  }
  if (request.self_join && !by_runs &&
      (!by_items || (res.split() == device_split::automatic && !items_for_total))) {
    plan = plan_partition(res, request.data, request.options.eps, n_shards,
                          default_partition_sample(request.data.d), point_cost);
    sample_seconds = plan->sample_seconds;
    request.stats.add_stage("partition sample", sample_seconds);
    if (by_items && res.split() == device_split::automatic) {
      // Counts by row: slabs deliver each row once and index a share each; items repeat no
      // distance but each device indexes, counts into and delivers every row (at 2-D, 200M
      // points S 500, two devices were 1.07x one). So slabs, unless their halo repeats much of
      // the work (Expo16D: 89% of the points on two slabs).
      const double halo = estimated_halo_fraction(plan->partition, request.data, 1u << 20, threads);
      by_items = halo > items_above_halo;
      request.stats.notes.emplace_back(
          "devices_split_reason", concat("slabs would have a halo of about ", halo,
                                         " of the points: ", by_items ? "work items" : "slabs"));
    }
  }
  std::vector<work_share> item_shares(by_items ? n_shards : 0);
  std::optional<range_table> runs;
  if (by_items) {
    for (std::size_t g = 0; g < n_shards; ++g) {
      shards[g].own = request.queries.n;
      item_shares[g] = {static_cast<unsigned>(g), static_cast<unsigned>(n_shards)};
    }
    request.stats.notes.emplace_back(
        "devices_split",
        concat("work items: every device indexes all the points and counts one item in "
               "every ",
               n_shards, " of the workload order"));
  } else if (by_runs) {
    runs.emplace(request.sink, query_runs(request.queries.n, n_shards));
    request.stats.notes.emplace_back(
        "devices_split", "query runs: every device joins one run of the queries against all the "
                         "points and writes its rows where they lie in the table");
  } else if (request.self_join) {
    cut_boxes(request, *plan, shards, threads);
  } else {
    deal_queries(request, shards);
  }
  std::uint64_t copied_bytes = 0;
  const std::size_t row_bytes = request.queries.d * size_of(request.queries.type);
  for (const shard& s : shards) copied_bytes += s.ids.size() * (row_bytes + sizeof(std::uint32_t));
  if (!by_items) {
    request.budget.require_host(copied_bytes, "the devices' copies of their points");
    // The sample's join has its own stage: this one is the rest (cuts, assignment, the budget).
    request.stats.add_stage("partition", clock.seconds() - sample_seconds);
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
  std::optional<shard_table> table;
  if (!by_items && !by_runs && wanted.rows_in_place && !wanted.counts_only() &&
      !wanted.row_blocks) {
    table.emplace(request.sink, request.queries.n, n_shards);
  }
  // Sharing items, every device joins all the points: one upload split over the devices and
  // peer copies for the rest, rather than every device uploading everything (bench/peer_copy:
  // 1 GiB to four H100s in 9 ms so, 24 ms from pinned and 0.49 s from pageable memory each).
  std::optional<device_replicas> replicas;
  if ((by_items || by_runs) && request.self_join && e.reads_device_points() &&
      request.data.n > 0) {
    stopwatch copies;
    std::vector<resources*> shard_resources;
    for (const shard& s : shards) shard_resources.push_back(s.res);
    const std::uint64_t copy_bytes = request.data.n * row_bytes;  // a self-join: data = queries
    if (shard_limits.device_bytes != 0) {
      // The copies stay for the whole join: the engines plan within what the limit leaves.
      EPSJOIN_ENSURE(shard_limits.device_bytes > copy_bytes, out_of_memory,
                     "the device memory limit (", shard_limits.device_bytes,
                     " bytes) leaves no room beside each device's copy of the points (",
                     copy_bytes, " bytes)");
      shard_limits.device_bytes -= copy_bytes;
      for (shard& s : shards) s.res->set_memory(shard_limits);
    }
    replicas = replicate_to_devices(shard_resources, request.data);
    request.stats.h2d_point_bytes += replicas->h2d_bytes;
    request.stats.add_stage("devices' copies of the points", copies.seconds());
    request.stats.notes.emplace_back(
        "devices_points", concat("uploaded once, a run of rows to each device, the rest copied "
                                 "between the devices"));
  }

  auto run_shard = [&](std::size_t g) {
    shard& s = shards[g];
    try {
      stopwatch shard_clock;
      if (runs) {
        join_query_run(e, request, s, *runs, g, replicas ? replicas->views[g] : request.data,
                       progress.part(g), shard_limits, shard_threads);
        s.seconds = shard_clock.seconds();
        return;
      }
      if (replicas) {
        s.points = replicas->views[g];
      } else if (by_items) {
        s.points = request.queries;
      } else {
        s.points = gather_rows(request.queries, s.ids.span(), shard_threads, s.point_bytes);
        s.stats.add_stage("slab gather", shard_clock.seconds());
      }
      join_options options = request.options;
      options.include_self = false;  // dispatch adds them, once, for the caller's ids
      options.progress = progress.part(g);
      const std::span<const std::uint32_t> no_ids;
      // Ids are the caller's on every shard, so an unordered pair is kept on one shard only.
      s.sink = std::make_unique<row_subset_sink>(
          request.sink, s.ids.span(), s.own, request.self_join ? s.ids.span() : no_ids,
          row_subset_sink::options{.unordered = request.self_join && !by_items,
                                   .threads = shard_threads,
                                   .table = table ? &*table : nullptr});
      s.stats.self_join = request.self_join;
      join_request sub{*s.res,
                       s.points,
                       request.self_join ? s.points : request.data,
                       request.self_join,
                       options,
                       *s.sink,
                       s.stats,
                       memory_budget(shard_limits, request.budget.overrides()),
                       request.params};
      s.sink->set_budget(sub.budget);
      if (by_items) sub.item_share = &item_shares[g];
      if (table && request.self_join) sub.caller_ids = s.ids.span();
      if (s.points.n > 0 && sub.data.n > 0) e.run(sub);
      stopwatch ids_clock;
      s.sink->finish_in_place(sub.caller_ids_written);
      if (table && table->laid_out() && !sub.caller_ids_written) {
        s.stats.add_stage("rows' ids to the caller's", ids_clock.seconds());
      }
      s.seconds = shard_clock.seconds();
    } catch (...) {
      s.failure = std::current_exception();
      progress.stop();
      if (table) table->abandon();
      if (runs) runs->abandon();
    }
  };
  {
    std::vector<std::thread> others;
    for (std::size_t g = 1; g < n_shards; ++g) others.emplace_back(run_shard, g);
    run_shard(0);
    for (std::thread& t : others) t.join();
  }
  res.set_memory(caller_limits);
  for (const shard& s : shards) {
    if (!s.failure) continue;
    try {
      std::rethrow_exception(s.failure);
    } catch (const stopped_elsewhere&) {
      // Not a cause: another device's failure or the caller's stop is.
    } catch (...) {
      std::rethrow_exception(s.failure);
    }
  }
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
