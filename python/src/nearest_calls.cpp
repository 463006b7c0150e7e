// The k nearest within a radius (epsjoin/nearest.hpp) for the Python package: rows of at most k
// neighbours each, nearest first, as numpy arrays over the library's own vectors.

#include "nearest_calls.hpp"

#include <memory>

#include "join_support.hpp"
#include "owned_array.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

nb::tuple nearest_result(epsjoin::nearest_table table, const epsjoin::join_stats& stats,
                         bool with_stats) {
  auto owned = std::make_unique<epsjoin::nearest_table>(std::move(table));
  epsjoin::nearest_table& t = *owned;
  nb::capsule owner = owner_of(std::move(owned));
  return nb::make_tuple(numpy_view(t.offsets.data(), {t.offsets.size()}, owner),
                        numpy_view(t.neighbors.data(), {t.neighbors.size()}, owner),
                        numpy_view(t.distances.data(), {t.distances.size()}, owner),
                        with_stats ? nb::object(stats_dict(stats)) : nb::object(nb::none()));
}

nb::tuple nearest(points_array queries, std::optional<points_array> data, double eps,
                  std::size_t k, bool include_self, const run_settings& settings) {
  epsjoin::join_options geometry;
  set_geometry(settings, geometry);
  const epsjoin::dataset_view a = view_of(queries);
  epsjoin::nearest_sink sink(a, data ? view_of(*data) : a, k, geometry);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  return nearest_result(sink.release(), stats, true);
}

}  // namespace epsjoin_python
