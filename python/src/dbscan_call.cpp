#include "dbscan_call.hpp"

#include <epsjoin/dbscan.hpp>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "owned_array.hpp"
#include "released_call.hpp"

namespace epsjoin_python {

namespace {

nb::dict dbscan_stats(const epsjoin::dbscan_result& r, const epsjoin::dataset_view& points,
                      double eps, std::uint64_t min_samples, const epsjoin::dbscan_options& o) {
  nb::dict d;
  d["engine"] = r.engine;
  d["merge"] = r.merge;
  d["n"] = points.n;
  d["d"] = points.d;
  d["eps"] = eps;
  d["min_samples"] = min_samples;
  d["precision"] = std::string(epsjoin::to_string(o.precision));
  d["n_clusters"] = r.n_clusters;
  d["n_core"] = r.n_core;
  d["n_border"] = r.n_border;
  d["n_noise"] = r.n_noise;
  d["pairs"] = r.pairs;
  nb::dict stages;
  for (const epsjoin::stage_time& s : r.stages) stages[nb::str(s.name.c_str())] = s.seconds;
  d["stages"] = stages;
  d["seconds"] = r.seconds;
  nb::dict notes;
  for (const auto& [key, value] : r.notes) notes[nb::str(key.c_str())] = value;
  d["notes"] = notes;
  return d;
}

nb::tuple run_dbscan(const epsjoin::dataset_view& view, double eps, std::uint64_t min_samples,
                     const run_settings& settings, std::span<const double> weights = {}) {
  epsjoin::dbscan_options options;
  const auto metric = epsjoin::parse_metric(settings.metric);
  if (!metric) throw epsjoin::invalid_argument("unknown metric '" + settings.metric + "'");
  options.metric = *metric;
  options.sample_weight = weights;
  options.engine = settings.engine;
  options.precision = precision_of(settings.precision);
  options.params = settings.params;
  options.progress = interrupt_check(report_of(settings));
  auto result =
      std::make_unique<epsjoin::dbscan_result>(run_released(settings, [&](epsjoin::resources& r) {
        return epsjoin::dbscan(r, view, eps, min_samples, options);
      }));
  nb::dict stats = dbscan_stats(*result, view, eps, min_samples, options);
  const std::size_t n = result->labels.size();
  std::int64_t* labels = result->labels.data();
  std::uint8_t* core = result->core.data();
  // Both arrays keep the one result alive; it is freed when the last of them goes.
  nb::capsule owner = owner_of(std::move(result));
  return nb::make_tuple(numpy_view(labels, {n}, owner), numpy_view(core, {n}, owner), stats);
}

}  // namespace

nb::tuple dbscan(points_array points, double eps, std::uint64_t min_samples,
                 const run_settings& settings, std::optional<weights_array> weights) {
  std::span<const double> w;
  if (weights) w = {weights->data(), weights->shape(0)};
  return run_dbscan(view_of(points), eps, min_samples, settings, w);
}

nb::tuple dbscan_device(device_points points, double eps, std::uint64_t min_samples,
                        const run_settings& settings, std::optional<weights_array> weights) {
  const epsjoin::dataset_view view = device_view_of(points);
  std::span<const double> w;
  if (weights) w = {weights->data(), weights->shape(0)};
  return run_dbscan(view, eps, min_samples, on_points_device(settings, view.device), w);
}

}  // namespace epsjoin_python
