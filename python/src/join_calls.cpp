#include "join_calls.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#include <epsjoin/epsjoin.hpp>

#include "join_support.hpp"
#include "owned_array.hpp"
#include "released_call.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

void set_geometry(const run_settings& s, epsjoin::join_options& options) {
  const auto metric = epsjoin::parse_metric(s.metric);
  if (!metric) {
    throw epsjoin::invalid_argument("metric must be 'euclidean', 'manhattan', 'chebyshev', "
                                    "'cosine' or 'haversine', got '" + s.metric + "'");
  }
  options.metric = *metric;
  if (s.angles != "radians" && s.angles != "degrees") {
    throw epsjoin::invalid_argument("angles must be 'radians' or 'degrees', got '" + s.angles + "'");
  }
  options.angles = s.angles == "degrees" ? epsjoin::angle_unit::degrees : epsjoin::angle_unit::radians;
  options.sphere_radius = s.sphere_radius;
  options.box = s.box;
}

nb::tuple neighbor_table(points_array queries, std::optional<points_array> data, double eps,
                         bool include_self, bool sort_indices, const run_settings& settings,
                         double added_bytes_per_pair) {
  epsjoin::csr_sink table(sort_indices, added_bytes_per_pair);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, table);
  return table_result(table, queries.shape(0), stats);
}

nb::tuple neighbor_distance_table(points_array queries, std::optional<points_array> data,
                                  double eps, bool include_self, bool sort_indices,
                                  const run_settings& settings) {
  epsjoin::csr_sink table(sort_indices, 0, true);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, table);
  return distance_table_result(table, queries.shape(0), stats);
}

nb::tuple neighbor_counts(points_array queries, std::optional<points_array> data, double eps,
                          bool include_self, bool per_row, const run_settings& settings) {
  epsjoin::count_sink sink(per_row);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  return counts_result(sink, per_row, queries.shape(0), stats);
}

nb::object join_to_file(points_array queries, std::optional<points_array> data, double eps,
                        bool include_self, const std::string& path, const std::string& format,
                        bool sort, const run_settings& settings) {
  // The sinks create their file (under a temporary name beside `path`) when they are made, so a
  // bad path is refused before the join.
  std::unique_ptr<epsjoin::result_sink> sink;
  if (format == "csr") {
    sink = std::make_unique<epsjoin::csr_file_sink>(path, sort);
  } else if (format == "npy" || format == "csv") {
    sink = std::make_unique<epsjoin::pair_file_sink>(
        path, format == "npy" ? epsjoin::pair_file_format::npy : epsjoin::pair_file_format::csv);
  } else {
    throw epsjoin::invalid_argument("format must be 'csr', 'npy' or 'csv', got '" + format + "'");
  }
  return stats_dict(run_join(queries, data, eps, include_self, settings, *sink));
}

nb::object filled_ones(std::size_t n, unsigned threads) {
  auto out = std::make_unique<output_vector<double>>();
  released_pass([&] { *out = epsjoin::filled_values(n, 1.0, threads, interrupt_check()); });
  double* data = out->data();
  return numpy_view(data, {n}, owner_of(std::move(out)));
}

}  // namespace epsjoin_python
