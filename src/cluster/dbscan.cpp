// DBSCAN on two joins through sinks (include/epsjoin/dbscan.hpp): count, then merge, then label.

#include "epsjoin/dbscan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <optional>

#include "base/cuda_part.hpp"
#include "base/expects.hpp"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/progress.hpp"
#include "base/timer.hpp"
#include "cluster/dbscan_cells.hpp"
#include "cluster/dbscan_device.hpp"
#include "cluster/dbscan_sinks.hpp"
#include "core/auto_select.hpp"
#include "core/engine.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin {

namespace detail {
namespace {

// For progress only: the count pass computes each distance once and writes nothing; the merge
// pass computes them again and hands every pair over.
constexpr double count_share = 0.35;
constexpr std::size_t grain = std::size_t{1} << 14;

// Host bytes per point: the neighbour count, reused as the smallest core neighbour (4), the
// union-find parent (4), the core flag (1) and the label (8); the device merge keeps only the
// last two on the host.
constexpr std::uint64_t host_merge_bytes_per_point = 17;
[[maybe_unused]] constexpr std::uint64_t device_merge_bytes_per_point = 9;  // CUDA builds

void require_memory(const resources& res, std::size_t n, std::uint64_t bytes_per_point) {
  const memory_budget budget(res.memory(), {});
  const std::uint64_t needed = bytes_per_point * n;
  const std::uint64_t available = budget.host_available();
  EPSJOIN_ENSURE(needed <= available, out_of_memory, "DBSCAN of ", n, " points needs ", needed,
                 " bytes of host memory beyond the join's index but ", available,
                 " bytes are available: raise --memory-limit or use fewer points");
}

join_options pass_options(const dbscan_options& options, double eps,
                          std::function<void(double)> progress) {
  join_options o;
  o.eps = eps;
  o.engine = options.engine;
  o.precision = options.precision;
  o.params = options.params;
  o.metric = options.metric;
  o.progress = std::move(progress);
  return o;
}

// Whether the joins would run on cpu-grid, which then clusters on its own cells instead
// (dbscan_cells.hpp). Engine parameters keep the joins: they are the joins' settings.
bool on_cpu_grid(resources& res, dataset_view points, const dbscan_options& options) {
  if (!options.params.empty() || points.on_device()) return false;
  if (options.engine == "cpu-grid") return true;
  if (options.engine != "auto") return false;
  const join_options o = pass_options(options, 1.0, {});
  count_sink unused;
  join_stats stats;
  const join_request probe{res, points, points, true, o, unused, stats,
                           memory_budget(res.memory(), {})};
  const engine* chosen = choose_engine(probe).chosen;
  return chosen != nullptr && chosen->name() == "cpu-grid";
}

// Every core point to its root (the smallest id of its set), then clusters numbered in the order
// of their first core point, as scikit-learn numbers them. A border point's cluster is that of
// its smallest core neighbour. `min_core` of a core point is never written by the merge (only
// non-core neighbours are), so it holds a root's number here.
void label_points(dbscan_result& r, std::span<std::uint32_t> parent,
                  std::span<std::uint32_t> min_core, unsigned threads) {
  const concurrent_union_find sets(parent);
  const std::size_t n = r.labels.size();
  parallel_for(threads, n, grain, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      if (r.core[i]) parent[i] = sets.find(static_cast<std::uint32_t>(i));
    }
  });
  std::uint32_t clusters = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!r.core[i]) continue;
    std::uint32_t& number = min_core[parent[i]];
    if (number == no_core) number = clusters++;
    r.labels[i] = number;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (r.core[i]) continue;
    if (min_core[i] == no_core) {
      r.labels[i] = -1;
      ++r.n_noise;
    } else {
      r.labels[i] = min_core[parent[min_core[i]]];
      ++r.n_border;
    }
  }
  r.n_clusters = clusters;
}

// Core flags from weighted neighbourhoods (dbscan_options::sample_weight), with the engine and
// pairs of the join that summed them.
void weighted_core(resources& res, dataset_view points, double eps, std::size_t min_samples,
                   const dbscan_options& options, std::function<void(double)> progress,
                   dbscan_result& r) {
  const std::span<const double> w = options.sample_weight;
  std::vector<double> sums(points.n, 0.0);
  weighted_count_sink summer(w, sums);
  const join_stats s = self_join(res, points, pass_options(options, eps, std::move(progress)),
                                 summer);
  r.engine = s.engine;
  r.pairs = s.pairs;
  const auto threshold = static_cast<double>(min_samples);
  parallel_for(res.threads(), points.n, grain, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) r.core[i] = sums[i] + w[i] >= threshold;
  });
}

void check_weights(std::span<const double> w, std::size_t n) {
  if (w.empty()) return;
  EPSJOIN_EXPECTS(w.size() == n, "sample_weight has ", w.size(), " entries for ", n, " points");
  for (std::size_t i = 0; i < n; ++i) {
    EPSJOIN_EXPECTS(std::isfinite(w[i]), "sample_weight[", i, "] is ", w[i],
                    ": weights must be finite");
  }
}

}  // namespace

dbscan_result run_dbscan(resources& res, dataset_view points, double eps,
                         std::size_t min_samples, const dbscan_options& options) {
  stopwatch total;
  EPSJOIN_EXPECTS(std::isfinite(eps) && eps > 0, "eps must be a finite number > 0, got ", eps);
  EPSJOIN_EXPECTS(min_samples >= 1, "min_samples must be at least 1, got 0");
  const std::size_t n = points.n;
  const unsigned threads = res.threads();
  check_weights(options.sample_weight, n);
  const bool weighted = !options.sample_weight.empty();
  // The cell and device merges count neighbours in Euclidean cells and rows, unweighted.
  const bool plain = !weighted && options.metric == distance_metric::euclidean;
  if (cuda_part_built() && options.device_merge && n > 0 && plain) {
    require_memory(res, n, device_merge_bytes_per_point);
    if (std::optional<dbscan_result> on_device =
            dbscan_on_device(res, points, eps, min_samples, options)) {
      if (options.progress) options.progress(1.0);
      on_device->seconds = total.seconds();
      return std::move(*on_device);
    }
  }
  // The merges below read the points on the host: points in device memory stay on the device
  // path above or are refused, never read where they are not.
  if (!cuda_part_built() && points.on_device() && n > 0) {
    throw unavailable("points in device memory need epsjoin built with CUDA");
  }
  // Weighted Euclidean device points take the host merge: its sinks read ids, never points.
  const bool ids_only = weighted && options.metric == distance_metric::euclidean;
  EPSJOIN_EXPECTS(!points.on_device() || n == 0 || ids_only,
                  "points in device memory are clustered on the device: a GPU engine that "
                  "delivers its rows there (auto, lbjoin, gds-join, ted-join, meta-16q, meta-1q) "
                  "with the device merge, unweighted and Euclidean, or weighted and Euclidean "
                  "through the host merge; engine '", options.engine,
                  "'", options.device_merge ? "" : " with device_merge = false",
                  plain ? " does not" : ", another metric does not");
  if (options.cell_merge && plain && on_cpu_grid(res, points, options)) {
    if (std::optional<dbscan_result> on_cells =
            dbscan_on_cells(res, points, eps, min_samples, options.progress)) {
      if (options.progress) options.progress(1.0);
      on_cells->seconds = total.seconds();
      return std::move(*on_cells);
    }
  }
  require_memory(res, n, host_merge_bytes_per_point + (weighted ? sizeof(double) : 0));

  dbscan_result r;
  r.labels.resize(n);
  r.core.assign(n, 0);
  std::vector<std::uint32_t> counts(n, 0);
  auto shown = std::make_shared<std::atomic<double>>(0.0);

  // Pass 1: neighbour counts, self included as scikit-learn counts it. With min_samples 1
  // every point is core and the count is not needed.
  stopwatch clock;
  if (weighted) {
    weighted_core(res, points, eps, min_samples, options,
                  progress_span(options.progress, 0, count_share, shown), r);
  } else if (min_samples > 1) {
    neighbour_count_sink counter(counts);
    const join_stats s = self_join(
        res, points, pass_options(options, eps, progress_span(options.progress, 0, count_share, shown)),
        counter);
    r.engine = s.engine;
    r.pairs = s.pairs;
  }
  if (!weighted) {
    parallel_for(threads, n, grain, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t i = b; i < e; ++i) r.core[i] = std::uint64_t{counts[i]} + 1 >= min_samples;
    });
  }
  r.n_core = static_cast<std::size_t>(std::count(r.core.begin(), r.core.end(), 1));
  r.stages.push_back({"count", clock.seconds()});

  // Pass 2: pairs into the union-find and the border points' smallest core neighbour. The count
  // array is done with; it becomes the latter.
  clock.restart();
  std::vector<std::uint32_t> parent(n);
  std::span<std::uint32_t> min_core(counts);
  parallel_for(threads, n, grain, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      parent[i] = r.core[i] ? static_cast<std::uint32_t>(i) : concurrent_union_find::not_member;
      min_core[i] = no_core;
    }
  });
  if (r.n_core > 0) {
    core_merge_sink merger(concurrent_union_find(parent), min_core, threads);
    const join_stats s = self_join(
        res, points, pass_options(options, eps, progress_span(options.progress, count_share, 1, shown)),
        merger);
    r.engine = s.engine;
    r.pairs = s.pairs;
  }
  r.stages.push_back({"merge", clock.seconds()});

  clock.restart();
  label_points(r, parent, min_core, threads);
  r.stages.push_back({"label", clock.seconds()});
  if (!r.engine.empty()) r.merge = "host";
  if (options.progress) options.progress(1.0);
  r.seconds = total.seconds();
  return r;
}

}  // namespace detail

dbscan_result dbscan(resources& res, dataset_view points, double eps, std::size_t min_samples,
                     const dbscan_options& options) {
  return detail::run_dbscan(res, points, eps, min_samples, options);
}

}  // namespace epsjoin
