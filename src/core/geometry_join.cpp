#include "core/geometry_join.hpp"

#include "core/expects.hpp"
#include "core/metric_join.hpp"
#include "core/periodic_join.hpp"
#include "core/timer.hpp"

namespace epsjoin::detail {

// Cosine or haversine on an engine that computes euclidean only: the engine joins unit vectors
// at a radius wide enough for every pair of the metric (docs/metrics.md), and every pair it
// delivers is re-checked in float64 in the metric before it reaches the caller's sink.
void run_on_unit_vectors(const engine& e, join_request& request, result_sink& counted) {
  stopwatch clock;
  const join_options& o = request.options;
  const unsigned threads = request.res.threads();
  const dataset data_units = unit_vectors(o, request.data, threads);
  const dataset query_units =
      request.self_join ? dataset() : unit_vectors(o, request.queries, threads);
  join_options unit_options = o;
  unit_options.metric = distance_metric::euclidean;
  unit_options.angles = angle_unit::radians;
  unit_options.sphere_radius = 1.0;
  unit_options.eps = unit_vector_radius(o, request.data.d, e.error_band());
  request.stats.add_stage("unit vectors", clock.seconds());
  request.stats.notes.emplace_back("unit-vector radius", concat(unit_options.eps));

  metric_filter_sink filter(counted, o, request.queries, request.data, threads);
  const dataset_view data = data_units.view();
  const dataset_view queries = request.self_join ? data : query_units.view();
  join_request unit_request{request.res,  queries, data,          request.self_join,
                            unit_options, filter,  request.stats, request.budget,
                            request.params};
  e.run(unit_request);
  request.stats.notes.emplace_back("metric re-checks", concat(filter.candidates()));
}

namespace {

// The caller's sink as the plain join of a periodic box sees it: counts or pairs, never rows, as
// the pairs through images follow and rows are laid out once.
class counts_or_pairs_sink final : public result_sink {
 public:
  explicit counts_or_pairs_sink(result_sink& inner) : inner_(inner) {}
  void consume(std::span<const index_pair> pairs) override { inner_.consume(pairs); }
  bool counts_only() const override { return inner_.counts_only(); }
  void consume_counts(std::span<const std::uint32_t> queries,
                      std::span<const std::uint32_t> counts) override {
    inner_.consume_counts(queries, counts);
  }

 private:
  result_sink& inner_;
};

}  // namespace

// A periodic box on an engine without one (core/periodic_join.hpp): the plain join, whose pairs
// are those the box does not wrap, then the queries against the images near the faces.
void run_periodic(const engine& e, join_request& request, result_sink& counted) {
  stopwatch clock;
  const join_options& o = request.options;
  join_options plain_options = o;
  plain_options.box.clear();
  counts_or_pairs_sink plain(counted);
  join_request plain_request{request.res,   request.queries, request.data,  request.self_join,
                             plain_options, plain,           request.stats, request.budget,
                             request.params};
  e.run(plain_request);
  request.stats.add_stage("plain join", clock.seconds());
  clock.restart();

  join_options image_options = plain_options;
  image_options.include_self = false;
  image_options.eps = periodic_engine_radius(o, request.data.d, e.error_band());
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
  periodic_filter_sink filter(counted, o, request.queries, request.data, images, near_faces);
  // Only the queries near a face can meet an image: they alone join the images, in float64 as
  // the images are.
  join_request image_request{request.res,   near_faces.points.view(), images.points.view(), false,
                             image_options, filter,  request.stats,        request.budget,
                             request.params};
  const double built = clock.seconds();
  e.run(image_request);
  request.stats.add_stage("periodic images", clock.seconds());
  request.stats.notes.emplace_back("periodic images (build / join s)",
                                   concat(built, " / ", clock.seconds() - built));
  request.stats.notes.emplace_back("periodic re-checks", concat(filter.candidates()));
}

}  // namespace epsjoin::detail
