#include "optics_call.hpp"

#include <epsjoin/optics.hpp>
#include <memory>
#include <string>

#include "owned_array.hpp"
#include "released_call.hpp"

namespace epsjoin_python {

namespace {

nb::dict optics_stats(const epsjoin::optics_result& r, const epsjoin::dataset_view& points,
                      double max_eps, std::uint64_t min_samples) {
  nb::dict d;
  d["engine"] = r.engine;
  d["n"] = points.n;
  d["d"] = points.d;
  d["max_eps"] = max_eps;
  d["min_samples"] = min_samples;
  d["pairs"] = r.pairs;
  nb::dict stages;
  for (const epsjoin::stage_time& s : r.stages) stages[nb::str(s.name.c_str())] = s.seconds;
  d["stages"] = stages;
  d["seconds"] = r.seconds;
  return d;
}

}  // namespace

nb::tuple optics(points_array points, double max_eps, std::uint64_t min_samples,
                 const run_settings& settings) {
  const epsjoin::dataset_view view = view_of(points);
  epsjoin::optics_options options;
  const auto metric = epsjoin::parse_metric(settings.metric);
  if (!metric) throw epsjoin::invalid_argument("unknown metric '" + settings.metric + "'");
  options.metric = *metric;
  options.engine = settings.engine;
  options.precision = precision_of(settings.precision);
  options.params = settings.params;
  options.progress = interrupt_check(report_of(settings));
  auto result =
      std::make_unique<epsjoin::optics_result>(run_released(settings, [&](epsjoin::resources& r) {
        return epsjoin::optics(r, view, max_eps, min_samples, options);
      }));
  nb::dict stats = optics_stats(*result, view, max_eps, min_samples);
  epsjoin::optics_result& r = *result;
  const std::size_t n = r.ordering.size();
  nb::capsule owner = owner_of(std::move(result));
  return nb::make_tuple(numpy_view(r.ordering.data(), {n}, owner),
                        numpy_view(r.reachability.data(), {n}, owner),
                        numpy_view(r.core_distances.data(), {n}, owner),
                        numpy_view(r.predecessor.data(), {n}, owner), stats);
}

void bind_optics(nb::module_& m) {
  using namespace nb::literals;
  m.def("optics", &optics, "points"_a, "max_eps"_a, "min_samples"_a, "settings"_a);
}

}  // namespace epsjoin_python
