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

// A periodic box on an engine without one: the original queries joined against the points and
// their images near the faces, each pair kept once through its minimum image and re-checked.
void run_periodic(const engine& e, join_request& request, result_sink& counted) {
  stopwatch clock;
  const join_options& o = request.options;
  join_options image_options = o;
  image_options.box.clear();
  image_options.include_self = false;
  image_options.eps = periodic_engine_radius(o, request.data.d, e.error_band());
  const periodic_images images =
      make_periodic_images(o, request.data, image_options.eps, request.budget);
  request.stats.add_stage("periodic images", clock.seconds());
  request.stats.notes.emplace_back("periodic images", concat(images.original.size()));

  periodic_filter_sink filter(counted, o, request.queries, images, request.self_join);
  const dataset_view points = images.points.view();
  // The images are float64; float32 queries of a join A x B are widened to match them.
  const bool widen = !request.self_join && request.queries.type != scalar_type::f64;
  const dataset widened = widen ? dataset::to_f64(request.queries) : dataset();
  const dataset_view queries =
      request.self_join ? dataset_view{points.data, request.data.n, points.d, points.type}
      : widen           ? widened.view()
                        : request.queries;
  join_request image_request{request.res,   queries, points,        false,
                             image_options, filter,  request.stats, request.budget,
                             request.params};
  e.run(image_request);
  request.stats.notes.emplace_back("periodic re-checks", concat(filter.candidates()));
}

}  // namespace epsjoin::detail
