#include "core/device_split.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "base/timer.hpp"
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
                   request.device_links == nullptr && !request.data.on_device() &&
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

device_split_choice choose_device_split(const engine& e, join_request& request,
                                        std::size_t n_shards, unsigned threads) {
  resources& res = request.res;
  stopwatch clock;
  device_split_choice choice;
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
      choice.division = device_division::one_device;
      return choice;
    }
  }
  if (items_for_total) {
    request.stats.notes.emplace_back(
        "devices_split_reason", "the total alone is wanted, summed on each device: work items");
  }
  if (request.self_join && !by_runs &&
      (!by_items || (res.split() == device_split::automatic && !items_for_total))) {
    choice.plan = plan_partition(res, request.data, request.options.eps, n_shards,
                                 default_partition_sample(request.data.d), point_cost);
    choice.sample_seconds = choice.plan->sample_seconds;
    request.stats.add_stage("partition sample", choice.sample_seconds);
    if (by_items && res.split() == device_split::automatic) {
      // Counts by row: slabs deliver each row once and index a share each; items repeat no
      // distance but each device indexes, counts into and delivers every row (at 2-D, 200M
      // points S 500, two devices were 1.07x one). So slabs, unless their halo repeats much of
      // the work (Expo16D: 89% of the points on two slabs).
      const double halo = estimated_halo_fraction(choice.plan->partition, request.data, 1u << 20,
                                                   threads);
      by_items = halo > items_above_halo;
      request.stats.notes.emplace_back(
          "devices_split_reason", concat("slabs would have a halo of about ", halo,
                                         " of the points: ", by_items ? "work items" : "slabs"));
    }
  }
  choice.division = by_items       ? device_division::work_items
                    : by_runs      ? device_division::query_runs
                    : request.self_join ? device_division::slabs
                                        : device_division::dealt;
  return choice;
}

}  // namespace epsjoin::detail
