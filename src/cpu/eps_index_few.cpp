// The grid walk of a few queries (eps_index_few.hpp). Each query's 3^k neighbour cells are found
// by one binary search per row of cells along the last indexed dimension (stride 1, so a row of
// neighbour cells is a run of consecutive linear ids), and every point in them is decided by the
// oracle's own float64 sum: no float32 band, no SIMD layout, nothing to plan.

#include "cpu/eps_index_few.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "base/within_eps.hpp"
#include "grid/geometry.hpp"

namespace epsjoin::detail {

namespace {

constexpr int max_walked_dims = 4;

// The indexed points' coordinates as the oracle reads them: the float32 index keeps the points
// as given (its block is centred and rounded); the float64 block holds the input's values
// exactly, in cell order with its columns in the grid's order.
class indexed_points {
 public:
  template <class T>
  indexed_points(const eps_index_state& s, const cpu::grid_side<T>& side)
      : given_(s.points.view()) {
    if constexpr (std::is_same_v<T, double>) {
      block_ = &side.block;
      column_of_.assign(side.block.d, 0);
      for (std::size_t j = 0; j < side.plan.dim_order.size(); ++j) {
        column_of_[static_cast<std::size_t>(side.plan.dim_order[j])] = j;
      }
    }
  }

  double at(std::size_t position, std::uint32_t id, std::size_t column) const noexcept {
    if (block_ == nullptr) return given_.at(id, column);
    const std::size_t j = column_of_[column];
    return block_->by_column ? block_->column(j)[position] : block_->row(position)[j];
  }

 private:
  dataset_view given_;
  const cpu::point_block<double>* block_ = nullptr;
  std::vector<std::size_t> column_of_;  // input column -> the block's column
};

// The neighbour box of one query: per indexed dimension, its cell coordinate +-1 clipped to
// the grid (a query outside the grid meets at most the edge cells, decided like any other).
struct cell_box {
  std::array<std::uint32_t, max_walked_dims> lo{}, hi{};
};

cell_box box_of(const grid::geometry& geo, dataset_view queries, std::size_t a) {
  cell_box box;
  for (int j = 0; j < geo.k; ++j) {
    const std::int64_t c =
        grid::cell_coord(geo, j, queries.at(a, static_cast<std::size_t>(geo.dim[j])));
    const std::int64_t last = static_cast<std::int64_t>(geo.cells[j]) - 1;
    box.lo[static_cast<std::size_t>(j)] =
        static_cast<std::uint32_t>(std::clamp<std::int64_t>(c - 1, 0, last));
    box.hi[static_cast<std::size_t>(j)] =
        static_cast<std::uint32_t>(std::clamp<std::int64_t>(c + 1, 0, last));
  }
  return box;
}

// Calls visit(c) for every non-empty cell c of the box, row by row along the last dimension.
template <class Visit>
void for_each_cell(const grid::host_index& index, const cell_box& box, Visit&& visit) {
  const grid::geometry& geo = index.geo;
  if (geo.k == 0) {  // one cell holds every point
    for (std::size_t c = 0; c < index.n_cells(); ++c) visit(c);
    return;
  }
  const int last = geo.k - 1;
  std::array<std::uint32_t, max_walked_dims> at = box.lo;
  for (;;) {
    std::uint64_t row = 0;
    for (int j = 0; j < last; ++j) row += at[static_cast<std::size_t>(j)] * geo.stride[j];
    const std::uint64_t first = row + box.lo[static_cast<std::size_t>(last)];
    const std::uint64_t end = row + box.hi[static_cast<std::size_t>(last)] + 1;
    for (std::size_t c = index.lower_bound(first, 0, index.n_cells());
         c < index.n_cells() && index.cell_ids[c] < end; ++c) {
      visit(c);
    }
    int j = last - 1;  // the odometer over the other dimensions
    for (; j >= 0; --j) {
      const auto u = static_cast<std::size_t>(j);
      if (at[u] < box.hi[u]) {
        ++at[u];
        break;
      }
      at[u] = box.lo[u];
    }
    if (j < 0) return;
  }
}

template <class T>
std::size_t walk_side(const eps_index_state& s, const cpu::grid_side<T>& side, dataset_view queries,
                      double eps, result_sink& sink) {
  const grid::host_index& index = side.index;
  const indexed_points points(s, side);
  const double eps2 = eps * eps;
  std::size_t candidates = 0;
  std::vector<index_pair> pairs;
  for (std::size_t a = 0; a < queries.n; ++a) {
    const std::size_t row_start = pairs.size();
    for_each_cell(index, box_of(index.geo, queries, a), [&](std::size_t c) {
      for (std::size_t p = index.cell_begin[c]; p < index.cell_begin[c + 1]; ++p) {
        const std::uint32_t id = index.permutation[p];
        const double square = reported_square(
            s.d, [&](std::size_t k) { return queries.at(a, k) - points.at(p, id, k); });
        if (square <= eps2) pairs.push_back({static_cast<std::uint32_t>(a), id});
      }
      candidates += index.cell_size(c);
    });
    std::sort(pairs.begin() + static_cast<std::ptrdiff_t>(row_start), pairs.end());
  }
  if (!pairs.empty()) sink.consume(pairs);
  return candidates;
}

template <class T>
bool walkable(const eps_index_state& s, const cpu::grid_side<T>& side) {
  // A float32 side is read through the points as given, which only the float32 index keeps.
  const bool readable = std::is_same_v<T, double> || s.points.view().n == s.n;
  return side.index.geo.k <= max_walked_dims && readable;
}

}  // namespace

bool walks_grid(const eps_index_state& s, std::size_t level, dataset_view queries) {
  if (queries.n > few_queries_limit || s.options.metric != distance_metric::euclidean) return false;
  return std::visit([&](const auto& side) { return walkable(s, side); }, s.levels[level]);
}

std::size_t walk_grid(const eps_index_state& s, std::size_t level, dataset_view queries, double eps,
                      result_sink& sink) {
  return std::visit([&](const auto& side) { return walk_side(s, side, queries, eps, sink); },
                    s.levels[level]);
}

}  // namespace epsjoin::detail
