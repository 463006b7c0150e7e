// The k nearest within a radius (epsjoin/nearest.hpp) for the Python package: rows of at most k
// neighbours each, nearest first, as (queries, k) numpy arrays.

#include "nearest_calls.hpp"

#include <cstdint>
#include <limits>
#include <memory>

#include "join_support.hpp"
#include "owned_array.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

namespace {

// The table as scipy's radius-bounded cKDTree.query gives it: (rows, k) arrays, a missing
// neighbour at distance inf with index `n_points`.
struct padded_rows {
  output_vector<double> distances;
  output_vector<std::int64_t> indices;
};

padded_rows padded(const epsjoin::nearest_table& t, std::size_t k, std::size_t n_points) {
  const std::size_t rows = t.n_queries();
  padded_rows out{output_vector<double>(rows * k), output_vector<std::int64_t>(rows * k)};
  for (std::size_t q = 0; q < rows; ++q) {
    const auto ids = t.row(q);
    const auto dist = t.distance_row(q);
    for (std::size_t r = 0; r < k; ++r) {
      const bool found = r < ids.size();
      out.distances[q * k + r] = found ? dist[r] : std::numeric_limits<double>::infinity();
      out.indices[q * k + r] =
          found ? static_cast<std::int64_t>(ids[r]) : static_cast<std::int64_t>(n_points);
    }
  }
  return out;
}

}  // namespace

nb::tuple nearest_result(const epsjoin::nearest_table& table, std::size_t k, std::size_t n_points,
                         const epsjoin::join_stats& stats, bool with_stats) {
  auto owned = std::make_unique<padded_rows>();
  released_pass([&] { *owned = padded(table, k, n_points); });
  padded_rows& p = *owned;
  const std::size_t rows = table.n_queries();
  nb::capsule owner = owner_of(std::move(owned));
  return nb::make_tuple(numpy_view(p.distances.data(), {rows, k}, owner),
                        numpy_view(p.indices.data(), {rows, k}, owner),
                        with_stats ? nb::object(stats_dict(stats)) : nb::object(nb::none()));
}

nb::tuple nearest(points_array queries, std::optional<points_array> data, double eps, std::size_t k,
                  bool include_self, const run_settings& settings) {
  epsjoin::join_options geometry;
  set_geometry(settings, geometry);
  const epsjoin::dataset_view a = view_of(queries);
  epsjoin::nearest_sink sink(a, data ? view_of(*data) : a, k, geometry);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  return nearest_result(sink.table(), k, data ? data->shape(0) : queries.shape(0), stats, true);
}

}  // namespace epsjoin_python
