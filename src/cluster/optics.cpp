// OPTICS on the eps-join (epsjoin/optics.hpp): one self-join into a CSR table of ids, the core
// distances row by row in parallel, then the ordering, which is sequential by nature: a
// priority queue of the reachable unprocessed points, keyed by (reachability, id) so the next
// point is scikit-learn's argmin (smallest reachability, then smallest index). The queue is an
// indexed binary heap: a point is in it at most once and its key only falls, so it holds at most
// n ids whatever the number of pairs. All three steps run on the points renumbered along a grid
// of cells (cluster/near_order.hpp), so that a row's neighbours lie near each other in memory;
// ties and new starts are still decided by the caller's indices.

#include "epsjoin/optics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <span>

#include "base/expects.hpp"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/progress.hpp"
#include "base/timer.hpp"
#include "cluster/near_order.hpp"
#include "cluster/pair_distance.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin {

using detail::memory_budget;
using detail::stopwatch;

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();
constexpr std::uint32_t not_queued = std::numeric_limits<std::uint32_t>::max();
// Reachability, core distances and predecessors twice (the walk's, then the caller's), the
// ordering, the heap and its positions, the two numberings, and the renumbering's keys.
constexpr std::uint64_t bytes_per_point = 2 * (8 + 8 + 8) + 4 + 4 + 4 + 4 + 4 + 16;
// Shares of the run for progress: the join, the core distances, the ordering.
constexpr double join_share = 0.6, core_share = 0.1;

// The reachable unprocessed points, smallest (reachability, id) on top.
class reach_queue {
 public:
  reach_queue(const std::vector<double>& reach, std::span<const std::uint32_t> original)
      : reach_(reach), original_(original), at_(original.size(), not_queued) {
    const std::size_t n = original.size();
    heap_.reserve(std::min<std::size_t>(n, 1 << 20));
  }
  bool empty() const noexcept { return heap_.empty(); }

  // Adds `id`, or moves it up after its reachability fell.
  void lowered(std::uint32_t id) {
    if (at_[id] == not_queued) {
      at_[id] = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back(id);
    }
    up(at_[id]);
  }

  std::uint32_t pop() {
    const std::uint32_t top = heap_.front();
    at_[top] = not_queued;
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      at_[heap_.front()] = 0;
      down(0);
    }
    return top;
  }

 private:
  // Equal reachabilities by the caller's index, whatever the walk's numbering.
  bool before(std::uint32_t a, std::uint32_t b) const noexcept {
    return reach_[a] < reach_[b] || (reach_[a] == reach_[b] && original_[a] < original_[b]);
  }
  void place(std::size_t slot, std::uint32_t id) {
    heap_[slot] = id;
    at_[id] = static_cast<std::uint32_t>(slot);
  }
  void up(std::size_t slot) {
    const std::uint32_t id = heap_[slot];
    while (slot > 0 && before(id, heap_[(slot - 1) / 2])) {
      place(slot, heap_[(slot - 1) / 2]);
      slot = (slot - 1) / 2;
    }
    place(slot, id);
  }
  void down(std::size_t slot) {
    const std::uint32_t id = heap_[slot];
    for (;;) {
      std::size_t child = 2 * slot + 1;
      if (child >= heap_.size()) break;
      if (child + 1 < heap_.size() && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], id)) break;
      place(slot, heap_[child]);
      slot = child;
    }
    place(slot, id);
  }

  const std::vector<double>& reach_;
  std::span<const std::uint32_t> original_;
  std::vector<std::uint32_t> heap_;
  std::vector<std::uint32_t> at_;  // each id's slot, or not_queued
};

void require_memory(const resources& res, std::size_t n, std::uint64_t point_bytes) {
  const memory_budget budget(res.memory(), {});
  const std::uint64_t needed = (bytes_per_point + point_bytes) * n;
  const std::uint64_t available = budget.host_available();
  EPSJOIN_ENSURE(needed <= available, out_of_memory, "OPTICS of ", n, " points needs ", needed,
                 " bytes of host memory beside its neighbour table but ", available,
                 " bytes are available: raise the memory limit or use fewer points");
}

// Each row's distance to its (min_samples - 1)-th nearest other point (the min_samples-th
// counting the point itself); infinity where the row holds fewer.
std::vector<double> core_distances(const neighbor_table& table, const detail::pair_distance& dist,
                                   std::size_t min_samples, unsigned threads) {
  const std::size_t n = table.n_queries();
  std::vector<double> core(n, min_samples <= 1 ? 0.0 : infinity);
  if (min_samples <= 1) return core;
  const std::size_t rank = min_samples - 2;  // 0-based among the others
  detail::parallel_for(threads, n, 1024, [&](std::size_t begin, std::size_t end, unsigned) {
    std::vector<double> row;
    for (std::size_t q = begin; q < end; ++q) {
      const auto ids = table.row(q);
      if (ids.size() <= rank) continue;
      row.resize(ids.size());
      for (std::size_t r = 0; r < ids.size(); ++r)
        row[r] = dist(static_cast<std::uint32_t>(q), ids[r]);
      std::nth_element(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(rank), row.end());
      core[q] = row[rank];
    }
  });
  return core;
}

// The order over the walk's ids (neighbours near in memory), reported in the caller's:
// original[a] is walk id a's index, the ties and the new starts are decided by it.
void order_points(const neighbor_table& table, const detail::pair_distance& dist,
                  std::span<const std::uint32_t> original, const std::vector<double>& core,
                  const std::function<void(double)>& progress, optics_result& r) {
  const std::size_t n = table.n_queries();
  std::vector<double> reach(n, infinity);
  std::vector<std::int64_t> from(n, -1);
  std::vector<std::uint32_t> walk_id(n);
  for (std::size_t a = 0; a < n; ++a) walk_id[original[a]] = static_cast<std::uint32_t>(a);
  std::vector<std::uint8_t> processed(n, 0);
  reach_queue queue(reach, original);
  r.ordering.clear();
  r.ordering.reserve(n);
  std::size_t next_start = 0;  // every caller's index below it is processed
  for (std::size_t step = 0; step < n; ++step) {
    std::uint32_t p;
    if (!queue.empty()) {
      p = queue.pop();
    } else {
      while (processed[walk_id[next_start]]) ++next_start;
      p = walk_id[next_start];
    }
    processed[p] = 1;
    r.ordering.push_back(original[p]);
    if (progress && step % 65536 == 0) progress(static_cast<double>(step) / static_cast<double>(n));
    if (core[p] == infinity) continue;
    for (const std::uint32_t j : table.row(p)) {
      if (processed[j]) continue;
      const double through_p = std::max(dist(p, j), core[p]);
      if (through_p < reach[j]) {
        reach[j] = through_p;
        from[j] = p;
        queue.lowered(j);
      }
    }
  }
  r.reachability.assign(n, infinity);
  r.predecessor.assign(n, -1);
  r.core_distances.assign(n, infinity);
  for (std::size_t a = 0; a < n; ++a) {
    r.reachability[original[a]] = reach[a];
    r.predecessor[original[a]] = from[a] < 0 ? -1 : std::int64_t{original[from[a]]};
    r.core_distances[original[a]] = core[a];
  }
}

}  // namespace

optics_result optics(resources& res, dataset_view points, double max_eps, std::size_t min_samples,
                     const optics_options& options) {
  stopwatch total;
  EPSJOIN_EXPECTS(std::isfinite(max_eps) && max_eps > 0,
                  "max_eps must be a finite number > 0, got ", max_eps);
  EPSJOIN_EXPECTS(min_samples >= 1, "min_samples must be at least 1, got 0");
  EPSJOIN_EXPECTS(!points.on_device(), "OPTICS orders points in host memory");
  require_memory(res, points.n, points.d * size_of(points.type));
  const unsigned threads = std::max(1u, res.threads());
  auto shown = std::make_shared<std::atomic<double>>(0.0);
  join_options o;
  o.eps = max_eps;
  o.engine = options.engine;
  o.precision = options.precision;
  o.params = options.params;
  o.metric = options.metric;
  o.progress = detail::progress_span(options.progress, 0, join_share, shown);

  optics_result r;
  stopwatch clock;
  // The join, the core distances and the order run on the points renumbered along a grid.
  const detail::near_order near = detail::order_by_cells(points, max_eps, options.metric, threads);
  const dataset_view walked = near.reordered() ? near.points.view() : points;
  csr_sink table_sink;
  const join_stats s = self_join(res, walked, o, table_sink);
  const neighbor_table& table = table_sink.table();
  r.engine = s.engine;
  r.pairs = s.pairs;
  r.stages.push_back({"join", clock.seconds()});

  clock.restart();
  const detail::pair_distance dist(walked, walked, o);
  const std::vector<double> core = core_distances(table, dist, min_samples, threads);
  r.stages.push_back({"core", clock.seconds()});
  if (options.progress)
    detail::progress_span(options.progress, 0, 1, shown)(join_share + core_share);

  clock.restart();
  order_points(table, dist, near.original, core,
               detail::progress_span(options.progress, join_share + core_share, 1, shown), r);
  r.stages.push_back({"order", clock.seconds()});
  if (options.progress) options.progress(1.0);
  r.seconds = total.seconds();
  return r;
}

std::vector<std::int64_t> optics_dbscan_labels(const optics_result& plot, double eps) {
  const std::size_t n = plot.ordering.size();
  EPSJOIN_EXPECTS(plot.reachability.size() == n && plot.core_distances.size() == n,
                  "an OPTICS result of ", n, " ordered points but ", plot.reachability.size(),
                  " reachabilities and ", plot.core_distances.size(), " core distances");
  std::vector<std::int64_t> labels(n, -1);
  std::int64_t current = -1;
  for (const std::uint32_t p : plot.ordering) {
    if (plot.reachability[p] > eps) {
      if (plot.core_distances[p] > eps) continue;  // noise
      ++current;
    }
    labels[p] = current;
  }
  return labels;
}

}  // namespace epsjoin
