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

namespace {

/// Summed dimension by dimension in float64, the order scikit-learn's and scipy's trees use, so
/// their distances and these agree to the last bit.
template <class T>
void distance_rows(const T* a, const T* b, std::size_t d, const std::uint64_t* starts,
                   const std::uint32_t* ids, double* dist, std::size_t begin, std::size_t end) {
  for (std::size_t q = begin; q < end; ++q) {
    const T* x = a + q * d;
    for (std::uint64_t k = starts[q]; k < starts[q + 1]; ++k) {
      const T* y = b + std::size_t{ids[k]} * d;
      double sum = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const double diff = static_cast<double>(x[j]) - static_cast<double>(y[j]);
        sum += diff * diff;
      }
      dist[k] = std::sqrt(sum);
    }
  }
}

}  // namespace

nb::tuple neighbor_table(points_array queries, std::optional<points_array> data, double eps,
                         bool include_self, bool sort_indices, const run_settings& settings,
                         double added_bytes_per_pair) {
  epsjoin::csr_sink table(sort_indices, added_bytes_per_pair);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, table);
  return table_result(table, queries.shape(0), stats);
}

nb::tuple neighbor_counts(points_array queries, std::optional<points_array> data, double eps,
                          bool include_self, bool per_row, const run_settings& settings) {
  epsjoin::count_sink sink(per_row);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  return counts_result(sink, per_row, queries.shape(0), stats);
}

nb::object csr_distances(
    points_array queries, std::optional<points_array> data,
    nb::ndarray<nb::ro, std::uint64_t, nb::ndim<1>, nb::c_contig> indptr,
    nb::ndarray<nb::ro, std::uint32_t, nb::ndim<1>, nb::c_contig> indices, unsigned threads) {
  const epsjoin::dataset_view a = view_of(queries);
  const epsjoin::dataset_view b = data ? view_of(*data) : a;
  if (indptr.shape(0) != a.n + 1) throw epsjoin::invalid_argument("indptr must have n_queries + 1 entries");
  const std::uint64_t* starts = indptr.data();
  const std::uint32_t* ids = indices.data();
  if (starts[a.n] != indices.shape(0)) throw epsjoin::invalid_argument("indptr does not match indices");
  if (a.type != b.type || a.d != b.d) throw epsjoin::invalid_argument("the point sets differ in dtype or d");
  auto out = std::make_unique<output_vector<double>>(indices.shape(0));
  double* dist = out->data();
  released_pass([&] {
    auto rows = [&](std::size_t begin, std::size_t end) {
      if (a.type == epsjoin::scalar_type::f64) {
        distance_rows(static_cast<const double*>(a.data), static_cast<const double*>(b.data), a.d,
                      starts, ids, dist, begin, end);
      } else {
        distance_rows(static_cast<const float*>(a.data), static_cast<const float*>(b.data), a.d,
                      starts, ids, dist, begin, end);
      }
    };
    // Pieces of 256 rows: a row's distances can take a while in many dimensions.
    for_row_blocks(a.n, threads, rows, 256);
  });
  const std::size_t nnz = out->size();
  return numpy_view(dist, {nnz}, owner_of(std::move(out)));
}

nb::object filled_ones(std::size_t n, unsigned threads) {
  auto out = std::make_unique<output_vector<double>>(n);
  double* data = out->data();
  released_pass([&] {
    // The fill is nothing; the page faults of a fresh array are the cost, spread over threads.
    for_row_blocks(n, threads, [&](std::size_t begin, std::size_t end) {
      std::fill(data + begin, data + end, 1.0);
    }, std::size_t{1} << 20);
  });
  return numpy_view(data, {n}, owner_of(std::move(out)));
}

}  // namespace epsjoin_python
