// Counts within several radii from one join at the largest (include/epsjoin/radii.hpp).

#include "epsjoin/radii.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

#include "base/expects.hpp"
#include "core/metric_join.hpp"

namespace epsjoin {

namespace {

// Takes the pairs of the join at the largest radius and counts each under the smallest radius
// it lies within (atomic adds: engines deliver from many threads); per-query sums come after.
class radii_sink final : public result_sink {
 public:
  radii_sink(const join_options& o, dataset_view queries, dataset_view data,
             std::vector<double> limits)
      : options_(o),
        query_copy_(queries.type == scalar_type::f64 ? dataset() : dataset::to_f64(queries)),
        data_copy_(data.type == scalar_type::f64 ? dataset() : dataset::to_f64(data)),
        queries_(queries.type == scalar_type::f64 ? static_cast<const double*>(queries.data)
                                                  : query_copy_.f64()),
        data_(data.type == scalar_type::f64 ? static_cast<const double*>(data.data)
                                            : data_copy_.f64()),
        d_(queries.d),
        limits_(std::move(limits)),
        buckets_(queries.n * limits_.size(), 0) {}

  void consume(std::span<const index_pair> pairs) override {
    const std::size_t r = limits_.size();
    for (const index_pair& p : pairs) {
      const double v = detail::metric_value(options_, queries_ + std::size_t{p.query} * d_,
                                            data_ + std::size_t{p.neighbor} * d_, d_);
      const auto k = static_cast<std::size_t>(
          std::lower_bound(limits_.begin(), limits_.end(), v) - limits_.begin());
      if (k == r) continue;  // only in the engine's band of the largest radius
      std::atomic_ref<std::uint32_t>(buckets_[std::size_t{p.query} * r + k])
          .fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::vector<std::uint32_t>& buckets() { return buckets_; }

 private:
  const join_options& options_;
  dataset query_copy_, data_copy_;
  const double* queries_;
  const double* data_;
  std::size_t d_;
  std::vector<double> limits_;  // ascending
  std::vector<std::uint32_t> buckets_;
};

radii_counts run_radii(resources& res, dataset_view queries, dataset_view data, bool self,
                       const join_options& options, std::span<const double> radii) {
  EPSJOIN_EXPECTS(!radii.empty(), "count_within_radii needs at least one radius");
  for (double r : radii) {
    EPSJOIN_EXPECTS(std::isfinite(r) && r > 0, "each radius must be a finite number > 0, got ", r);
  }
  // Radii sorted ascending; order[k] is the given position of the k-th smallest.
  std::vector<std::size_t> order(radii.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return radii[a] < radii[b]; });
  std::vector<double> limits;
  for (std::size_t k : order) limits.push_back(detail::metric_limit(options, radii[k]));

  join_options run_options = options;
  run_options.eps = radii[order.back()];
  radii_sink sink(options, queries, data, limits);
  radii_counts out;
  out.radii.assign(radii.begin(), radii.end());
  out.stats = self ? self_join(res, data, run_options, sink)
                   : join(res, queries, data, run_options, sink);
  const std::size_t r = radii.size();
  out.per_query.assign(queries.n * r, 0);
  out.totals.assign(r, 0);
  const std::vector<std::uint32_t>& buckets = sink.buckets();
  for (std::size_t q = 0; q < queries.n; ++q) {
    std::uint32_t running = 0;
    for (std::size_t k = 0; k < r; ++k) {
      running += buckets[q * r + k];
      out.per_query[q * r + order[k]] = running;
      out.totals[order[k]] += running;
    }
  }
  return out;
}

}  // namespace

radii_counts count_within_radii(resources& res, dataset_view points, const join_options& options,
                                std::span<const double> radii) {
  return run_radii(res, points, points, true, options, radii);
}

radii_counts count_within_radii(resources& res, dataset_view queries, dataset_view data,
                                const join_options& options, std::span<const double> radii) {
  return run_radii(res, queries, data, false, options, radii);
}

}  // namespace epsjoin
