// Renumbering along a grid of cells (near_order.hpp): one key a point, the library's stable
// radix sort, then the rows gathered in the new order.

#include "cluster/near_order.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>

#include "base/parallel.hpp"
#include "grid/plan.hpp"
#include "grid/radix_sort.hpp"

namespace epsjoin::detail {

namespace {

constexpr int max_key_dims = 3;
constexpr std::uint64_t max_cells_per_dim = std::uint64_t{1} << 20;  // 60 bits over 3 dims

struct cell_grid_key {
  int k = 0;
  std::array<std::size_t, max_key_dims> dim{};
  std::array<double, max_key_dims> low{}, per_cell{};
  std::array<std::uint64_t, max_key_dims> cells{}, stride{};
  int bits = 0;
};

cell_grid_key plan_key(dataset_view points, double eps, unsigned threads) {
  const grid::column_stats stats = grid::compute_column_stats(points, threads);
  const std::vector<double>& low = stats.min;
  const std::vector<double>& high = stats.max;
  std::vector<std::size_t> widest(points.d);
  std::iota(widest.begin(), widest.end(), 0);
  std::stable_sort(widest.begin(), widest.end(), [&](std::size_t a, std::size_t b) {
    return high[a] - low[a] > high[b] - low[b];
  });
  cell_grid_key g;
  g.k = static_cast<int>(std::min<std::size_t>(max_key_dims, points.d));
  std::uint64_t total = 1;
  for (int j = g.k - 1; j >= 0; --j) {
    const std::size_t c = widest[static_cast<std::size_t>(j)];
    const double extent = high[c] - low[c];
    const double wanted = extent > 0 ? std::ceil(extent / eps) : 1.0;
    g.dim[j] = c;
    g.low[j] = low[c];
    g.cells[j] = static_cast<std::uint64_t>(std::clamp(wanted, 1.0, double(max_cells_per_dim)));
    g.per_cell[j] = extent > 0 ? static_cast<double>(g.cells[j]) / extent : 0.0;
    g.stride[j] = total;
    total *= g.cells[j];
  }
  while (g.bits < 64 && (std::uint64_t{1} << g.bits) < total) ++g.bits;
  return g;
}

std::uint64_t key_of(const cell_grid_key& g, dataset_view points, std::size_t i) {
  std::uint64_t key = 0;
  for (int j = 0; j < g.k; ++j) {
    const double at = (points.at(i, g.dim[j]) - g.low[j]) * g.per_cell[j];
    const auto cell = static_cast<std::uint64_t>(std::max(at, 0.0));
    key += std::min(cell, g.cells[j] - 1) * g.stride[j];
  }
  return key;
}

}  // namespace

near_order order_by_cells(dataset_view points, double eps, distance_metric metric,
                          unsigned threads) {
  near_order out;
  const std::size_t n = points.n;
  out.original.resize(n);
  std::iota(out.original.begin(), out.original.end(), 0u);
  const bool by_coordinates = metric == distance_metric::euclidean ||
                              metric == distance_metric::manhattan ||
                              metric == distance_metric::chebyshev;
  if (!by_coordinates || n < 2 || points.d == 0) return out;
  const cell_grid_key g = plan_key(points, eps, threads);
  std::vector<std::uint64_t> keys(n), keys_scratch(n);
  std::vector<std::uint32_t> ids_scratch(n);
  parallel_for(threads, n, 1 << 14, [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t i = begin; i < end; ++i) keys[i] = key_of(g, points, i);
  });
  if (grid::radix_sort_pairs(keys.data(), out.original.data(), keys_scratch.data(),
                             ids_scratch.data(), n, std::max(g.bits, 1), threads)) {
    out.original.swap(ids_scratch);
  }
  out.points = dataset(n, points.d, points.type);
  const std::size_t row = points.d * size_of(points.type);
  auto* to = points.type == scalar_type::f64 ? reinterpret_cast<unsigned char*>(out.points.f64())
                                             : reinterpret_cast<unsigned char*>(out.points.f32());
  const auto* from = static_cast<const unsigned char*>(points.data);
  parallel_for(threads, n, 1 << 14, [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t a = begin; a < end; ++a) {
      std::memcpy(to + a * row, from + std::size_t{out.original[a]} * row, row);
    }
  });
  return out;
}

}  // namespace epsjoin::detail
