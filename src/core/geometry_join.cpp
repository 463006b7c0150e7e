#include "core/geometry_join.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "base/expects.hpp"
#include "base/timer.hpp"
#include "core/metric_join.hpp"
#include "core/periodic_join.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

// Cosine, haversine, L1 or L-infinity on an engine that computes euclidean only: the engine
// joins unit vectors (cosine, haversine) or the points themselves (L1, L-infinity) at a
// Euclidean radius wide enough for every pair of the metric (docs/metrics.md), and every pair it
// delivers is re-checked in float64 in the metric before it reaches the caller's sink.
void run_on_euclidean(const engine& e, join_request& request, result_sink& counted) {
  stopwatch clock;
  const join_options& o = request.options;
  const unsigned threads = request.res.threads();
  const bool units = joins_unit_vectors(o.metric);
  const dataset data_units = units ? unit_vectors(o, request.data, threads) : dataset();
  const dataset query_units =
      units && !request.self_join ? unit_vectors(o, request.queries, threads) : dataset();
  join_options euclidean_options = o;
  euclidean_options.metric = distance_metric::euclidean;
  euclidean_options.angles = angle_unit::radians;
  euclidean_options.sphere_radius = 1.0;
  if (units) {
    euclidean_options.eps = unit_vector_radius(o, request.data.d, e.error_band());
    request.stats.add_stage("unit vectors", clock.seconds());
    request.stats.notes.emplace_back("unit-vector radius", concat(euclidean_options.eps));
  } else {
    const double largest =
        o.precision == scalar_type::f32
            ? std::max(largest_magnitude(request.data, threads),
                       request.self_join ? 0.0 : largest_magnitude(request.queries, threads))
            : 0.0;
    euclidean_options.eps = enclosing_ball_radius(o, request.data.d, e.error_band(), largest);
    request.stats.notes.emplace_back("euclidean radius", concat(euclidean_options.eps));
  }

  metric_filter_sink filter(counted, o, request.queries, request.data, threads);
  const dataset_view data = units ? data_units.view() : request.data;
  const dataset_view queries =
      request.self_join ? data : (units ? query_units.view() : request.queries);
  join_request euclidean_request{request.res,       queries, data,          request.self_join,
                                 euclidean_options, filter,  request.stats, request.budget,
                                 request.params};
  e.run(euclidean_request);
  request.stats.notes.emplace_back("metric re-checks", concat(filter.candidates()));
}

namespace {

// The caller's sink as the plain join of a periodic box sees it: counts, pairs, or rows with room
// left at the end of each row for the pairs through images (`extra`, found before).
class plain_part_sink final : public result_sink {
 public:
  plain_part_sink(result_sink& inner, std::span<const index_pair> extra, std::size_t n_queries)
      : inner_(inner), extra_(extra), extra_counts_(extra.empty() ? 0 : n_queries, 0) {
    for (const index_pair& p : extra_) ++extra_counts_[p.query];
  }
  void consume(std::span<const index_pair> pairs) override { inner_.consume(pairs); }
  // Counts go on query by query (never as a total), pairs in both orientations, rows in place
  // when the caller takes them.
  sink_request request() const override {
    const sink_request inner = inner_.request();
    if (inner.counts_only()) return {.form = result_form::counts};
    return {.form = inner.rows_in_place ? result_form::table : result_form::pairs,
            .rows_in_place = inner.rows_in_place};
  }
  row_destination consume_counts(const count_batch& batch) override {
    if (batch.rows == row_delivery::none) return inner_.consume_counts(batch);
    plain_counts_.assign(batch.counts.begin(), batch.counts.end());
    std::vector<std::uint32_t> widened = plain_counts_;
    for (std::size_t q = 0; q < extra_counts_.size(); ++q) widened[q] += extra_counts_[q];
    rows_ = lay_out_rows(inner_, widened);
    return rows_;
  }
  /// After the plain join: the pairs through images go after each row's own, or as pairs.
  void deliver_extra() {
    if (rows_.neighbors == nullptr) {
      if (!extra_.empty()) inner_.consume(extra_);
      return;
    }
    std::vector<std::uint32_t>& next = plain_counts_;  // becomes each row's next free slot
    for (const index_pair& p : extra_) rows_.row(p.query)[next[p.query]++] = p.neighbor;
  }

 private:
  result_sink& inner_;
  std::span<const index_pair> extra_;
  std::vector<std::uint32_t> extra_counts_, plain_counts_;
  row_destination rows_;
};

// Keeps the pairs it is handed (from the engine's threads), charged to the join's budget.
class pair_collector final : public result_sink {
 public:
  explicit pair_collector(memory_budget& budget) : budget_(budget) {}
  void consume(std::span<const index_pair> pairs) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    charges_.push_back(budget_.charge_host(pairs.size_bytes(), "the pairs through periodic images"));
    pairs_.insert(pairs_.end(), pairs.begin(), pairs.end());
  }
  std::span<const index_pair> pairs() const { return pairs_; }

 private:
  memory_budget& budget_;
  std::mutex mutex_;
  std::vector<index_pair> pairs_;
  std::vector<host_charge> charges_;
};

// The queries near the faces against the images of the points near the faces, re-checked into
// `out` (core/periodic_join.hpp).
void join_images(const engine& e, join_request& request, const join_options& image_options,
                 result_sink& out) {
  stopwatch clock;
  const join_options& o = request.options;
  const unsigned threads = request.res.threads();
  std::vector<std::uint32_t> near_data =
      points_near_faces(o, request.data, image_options.eps, threads);
  const periodic_images images =
      make_periodic_images(o, request.data, near_data, image_options.eps, request.budget);
  request.stats.notes.emplace_back("periodic images", concat(images.original.size()));
  if (images.original.empty()) return;
  // The criterion is the same for queries, so a self-join's are the points with images.
  const periodic_queries near_faces = gather_queries(
      request.queries,
      request.self_join ? std::move(near_data)
                        : points_near_faces(o, request.queries, image_options.eps, threads),
      request.budget);
  request.stats.notes.emplace_back("queries near the faces", concat(near_faces.original.size()));
  if (near_faces.original.empty()) return;
  periodic_filter_sink filter(out, o, request.queries, request.data, images, near_faces);
  // Only the queries near a face can meet an image: they alone join the images, in float64 as
  // the images are.
  join_request image_request{request.res,   near_faces.points.view(), images.points.view(), false,
                             image_options, filter,  request.stats,        request.budget,
                             request.params};
  const double built = clock.seconds();
  e.run(image_request);
  request.stats.notes.emplace_back("periodic images (build / join s)",
                                   concat(built, " / ", clock.seconds() - built));
  request.stats.notes.emplace_back("periodic re-checks", concat(filter.candidates()));
}

}  // namespace

// A periodic box on an engine without one (core/periodic_join.hpp): the plain join, whose pairs
// are those the box does not wrap, and the queries near the faces against the images of the
// points near the faces. Into rows, the images come first, so each row is sized once with room
// for both; otherwise they follow the plain join.
void run_periodic(const engine& e, join_request& request, result_sink& counted) {
  stopwatch clock;
  const join_options& o = request.options;
  join_options plain_options = o;
  plain_options.box.clear();
  join_options image_options = plain_options;
  image_options.include_self = false;
  image_options.eps = periodic_engine_radius(o, request.data.d, e.error_band());

  const sink_request wanted = counted.request();
  const bool rows = wanted.rows_in_place && !wanted.counts_only();
  pair_collector through_images(request.budget);
  if (rows) {
    join_images(e, request, image_options, through_images);
    request.stats.add_stage("periodic images", clock.seconds());
    clock.restart();
  }
  plain_part_sink plain(counted, through_images.pairs(), request.queries.n);
  join_request plain_request{request.res,   request.queries, request.data,  request.self_join,
                             plain_options, plain,           request.stats, request.budget,
                             request.params};
  e.run(plain_request);
  plain.deliver_extra();
  request.stats.add_stage("plain join", clock.seconds());
  if (!rows) {
    clock.restart();
    join_images(e, request, image_options, counted);
    request.stats.add_stage("periodic images", clock.seconds());
  }
}

}  // namespace epsjoin::detail
