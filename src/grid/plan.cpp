#include "grid/plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/expects.hpp"
#include "base/parallel.hpp"

namespace epsjoin::detail::grid {

namespace {

struct column_acc {
  std::vector<double> min, max, sum, sum2;
  explicit column_acc(std::size_t d)
      : min(d, std::numeric_limits<double>::infinity()),
        max(d, -std::numeric_limits<double>::infinity()),
        sum(d, 0.0),
        sum2(d, 0.0) {}
};

template <class T>
column_stats stats_of(const T* values, std::size_t n, std::size_t d, unsigned threads) {
  column_stats out;
  out.min.assign(d, 0.0);
  out.max.assign(d, 0.0);
  out.variance.assign(d, 0.0);
  if (n == 0) return out;
  // Sums are shifted by the first point, which keeps the variance of offset data accurate.
  std::vector<double> shift(d);
  for (std::size_t j = 0; j < d; ++j) shift[j] = static_cast<double>(values[j]);
  std::vector<column_acc> acc(std::max(1u, threads), column_acc(d));
  detail::parallel_for(threads, n, 1 << 14, [&](std::size_t begin, std::size_t end, unsigned w) {
    // A column at a time, its four sums in registers: the chunk stays in cache across the
    // columns, and the workers' accumulators (small heap blocks, which can share a cache line
    // between workers) are written once a chunk, not once a value.
    column_acc& a = acc[w];
    for (std::size_t j = 0; j < d; ++j) {
      double lo = a.min[j], hi = a.max[j], sum = 0.0, sum2 = 0.0;
      const double origin = shift[j];
      for (std::size_t i = begin; i < end; ++i) {
        const double x = static_cast<double>(values[i * d + j]);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        const double y = x - origin;
        sum += y;
        sum2 += y * y;
      }
      a.min[j] = lo;
      a.max[j] = hi;
      a.sum[j] += sum;
      a.sum2[j] += sum2;
    }
  });
  column_acc total(d);
  for (const column_acc& a : acc) {
    for (std::size_t j = 0; j < d; ++j) {
      total.min[j] = std::min(total.min[j], a.min[j]);
      total.max[j] = std::max(total.max[j], a.max[j]);
      total.sum[j] += a.sum[j];
      total.sum2[j] += a.sum2[j];
    }
  }
  const auto nn = static_cast<double>(n);
  for (std::size_t j = 0; j < d; ++j) {
    out.min[j] = total.min[j];
    out.max[j] = total.max[j];
    const double mean = total.sum[j] / nn;
    out.variance[j] = std::max(0.0, total.sum2[j] / nn - mean * mean);
  }
  return out;
}

}  // namespace

column_stats compute_column_stats(dataset_view data, unsigned threads) {
  if (data.type == scalar_type::f64) {
    return stats_of(static_cast<const double*>(data.data), data.n, data.d, threads);
  }
  return stats_of(static_cast<const float*>(data.data), data.n, data.d, threads);
}

double cell_side(double eps, double extent) {
  // Rounding: f = fl(fl(x - origin) * fl(1 / side)) is within 2^-52 f of (x - origin) / s', where
  // s' = 1 / fl(1 / side) is within 2^-53 of side, and f is at most the cell count c. Two points
  // within eps (1 + 2^-41) of each other (beyond the oracle's 1e-12 band) then have computed
  // quotients at most (1 + 2^-41) (1 + 2^-52) / (1 + r) + c 2^-51 apart, which is <= 1 (so their
  // cells are adjacent) when r >= 2^-41 + c 2^-48, with room to spare.
  const double cells = std::min(extent / eps + 3.0, static_cast<double>(max_cells_per_dim));
  const double r = 0x1p-40 + cells * 0x1p-48;
  // A dimension that would need more than max_cells_per_dim cells gets wider cells (coarser
  // pruning, still exact: any side >= eps keeps neighbours in adjacent cells).
  return std::max(eps * (1.0 + r), extent / static_cast<double>(max_cells_per_dim - 4));
}

grid_plan plan_grid(const column_stats& stats, const plan_options& options) {
  const double eps = options.eps;
  EPSJOIN_EXPECTS(std::isfinite(eps) && eps > 0, "grid: eps must be finite and > 0, got ", eps);
  EPSJOIN_EXPECTS(options.max_k >= 0 && options.max_k <= max_indexed_dims,
                  "grid: at most ", max_indexed_dims, " indexed dimensions, asked for ",
                  options.max_k);
  const int d = static_cast<int>(stats.min.size());
  EPSJOIN_EXPECTS(d >= 1, "grid: points need at least one dimension");

  std::vector<int> order(static_cast<std::size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  if (options.reorder) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return stats.variance[static_cast<std::size_t>(a)] >
             stats.variance[static_cast<std::size_t>(b)];
    });
  }

  grid_plan plan;
  geometry& g = plan.geo;
  g.d = d;
  g.eps = eps;
  std::vector<char> indexed(static_cast<std::size_t>(d), 0);
  int narrow = 0, overflow = 0;
  for (int col : order) {
    if (g.k == options.max_k) break;
    const auto c = static_cast<std::size_t>(col);
    const double extent = stats.max[c] - stats.min[c];
    const double side = cell_side(eps, extent);
    if (!std::isfinite(extent) || !std::isfinite(side) ||
        !(extent >= (options.min_span_cells - 1.0) * side)) {
      ++narrow;
      continue;
    }
    const double origin = stats.min[c] - side;
    const double inv_side = 1.0 / side;
    // Exactly the arithmetic of cell_coord(), so the last point lands in cell cells - 2.
    const double top = std::floor((stats.max[c] - origin) * inv_side);
    if (!std::isfinite(origin) || !std::isfinite(inv_side) || inv_side == 0.0 ||
        !(top + 2.0 <= static_cast<double>(max_cells_per_dim))) {
      ++narrow;
      continue;
    }
    const auto cells = static_cast<std::uint32_t>(top) + 2u;
    if (g.total_cells > max_total_cells / cells) {
      ++overflow;
      continue;
    }
    g.dim[g.k] = col;
    g.origin[g.k] = origin;
    g.side[g.k] = side;
    g.inv_side[g.k] = inv_side;
    g.cells[g.k] = cells;
    g.total_cells *= cells;
    indexed[c] = 1;
    ++g.k;
  }
  std::uint64_t stride = 1;
  for (int j = g.k - 1; j >= 0; --j) {
    g.stride[j] = stride;
    stride *= g.cells[j];
  }

  for (int j = 0; j < g.k; ++j) plan.dim_order.push_back(g.dim[j]);
  for (int col : order) {
    if (!indexed[static_cast<std::size_t>(col)]) plan.dim_order.push_back(col);
  }
  plan.reason = detail::concat("k=", g.k, " of d=", d, " (", options.reorder ? "by variance" : "in column order",
                               ", at most ", options.max_k, "; ", narrow,
                               " dims span < ", options.min_span_cells, " cells, ", overflow,
                               " skipped to keep ids in 64 bits); ", g.total_cells, " cells");
  return plan;
}

grid_plan plan_grid(dataset_view data, const plan_options& options, unsigned threads) {
  if (options.max_k == 0 && !options.reorder) {
    // Nothing indexed, columns in input order: the statistics would go unread.
    column_stats unread;
    unread.min.assign(data.d, 0.0);
    unread.max.assign(data.d, 0.0);
    unread.variance.assign(data.d, 0.0);
    return plan_grid(unread, options);
  }
  return plan_grid(compute_column_stats(data, threads), options);
}

}  // namespace epsjoin::detail::grid
