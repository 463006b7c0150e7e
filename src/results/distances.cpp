#include "results/distances.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/cancellation.hpp"
#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "base/within_eps.hpp"

namespace epsjoin::detail {

namespace {

// Rows in pieces of 256: a row's distances can take a while in many dimensions.
constexpr std::size_t rows_a_piece = 256;

template <class T>
void distance_rows(const T* a, const T* b, std::size_t d, std::span<const std::uint64_t> offsets,
                   const std::uint32_t* neighbors, double* out, std::size_t begin,
                   std::size_t end) {
  for (std::size_t q = begin; q < end; ++q) {
    cancellation_point();  // a row can take a while in many dimensions
    const T* x = a + q * d;
    for (std::uint64_t k = offsets[q]; k < offsets[q + 1]; ++k) {
      const T* y = b + std::size_t{neighbors[k]} * d;
      out[k] = reported_distance(d, [&](std::size_t j) {
        return static_cast<double>(x[j]) - static_cast<double>(y[j]);
      });
    }
  }
}

}  // namespace

void table_distances(dataset_view queries, dataset_view data,
                     std::span<const std::uint64_t> offsets, const std::uint32_t* neighbors,
                     double* out, unsigned threads) {
  const std::size_t rows = offsets.empty() ? 0 : offsets.size() - 1;
  if (rows == 0 || offsets.back() == 0) return;
  EPSJOIN_ENSURE(queries.n == rows && queries.data != nullptr && data.data != nullptr &&
                     !queries.on_device() && !data.on_device() && queries.type == data.type &&
                     queries.d == data.d,
                 invalid_argument,
                 "a table's distances are computed from its points in host memory, one dtype and "
                 "dimension for both sets; these were not given with the join (", rows,
                 " rows, ", queries.n, " query points)");
  parallel_for(threads, rows, rows_a_piece, [&](std::size_t b, std::size_t e, unsigned) {
    if (queries.type == scalar_type::f64) {
      distance_rows(static_cast<const double*>(queries.data),
                    static_cast<const double*>(data.data), queries.d, offsets, neighbors, out, b, e);
    } else {
      distance_rows(static_cast<const float*>(queries.data), static_cast<const float*>(data.data),
                    queries.d, offsets, neighbors, out, b, e);
    }
  });
}

void sort_rows_with_distances(std::span<const std::uint64_t> offsets, std::uint32_t* neighbors,
                              double* distances, unsigned threads) {
  const std::size_t rows = offsets.empty() ? 0 : offsets.size() - 1;
  parallel_for(threads, rows, 1024, [&](std::size_t b, std::size_t e, unsigned) {
    std::vector<std::pair<std::uint32_t, double>> row;
    for (std::size_t i = b; i < e; ++i) {
      const std::uint64_t first = offsets[i], last = offsets[i + 1];
      if (std::is_sorted(neighbors + first, neighbors + last)) continue;
      row.clear();
      for (std::uint64_t k = first; k < last; ++k) row.emplace_back(neighbors[k], distances[k]);
      std::sort(row.begin(), row.end());
      for (std::uint64_t k = first; k < last; ++k) {
        neighbors[k] = row[k - first].first;
        distances[k] = row[k - first].second;
      }
    }
  });
}

}  // namespace epsjoin::detail
