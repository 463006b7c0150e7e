#include "cluster/cell_grid.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "grid/radix_sort.hpp"

namespace epsjoin::detail {

namespace {

// Cells a little smaller than eps/sqrt(d), so that rounding cannot make a cell's diagonal reach
// past eps (its box is checked all the same).
constexpr double side_shrink = 1.0 - 0x1p-20;
// Along each dimension at most this many cells: a cell coordinate x * (1 / side) is then off by
// under 1e-8 of a cell, which the stencil's slack covers many times over.
constexpr double max_cells_per_dim = 0x1p24;
constexpr double stencil_slack = 1e-6;
constexpr std::size_t point_grain = std::size_t{1} << 14;

struct bounds {
  std::array<double, cell_max_dims> lo, hi;
  bool finite = true;
};

bounds bounds_of(dataset_view v, unsigned threads) {
  const std::size_t d = v.d;
  std::vector<bounds> part(std::max(threads, 1u));
  for (bounds& b : part) {
    b.lo.fill(std::numeric_limits<double>::infinity());
    b.hi.fill(-std::numeric_limits<double>::infinity());
  }
  parallel_for(threads, v.n, point_grain, [&](std::size_t b, std::size_t e, unsigned w) {
    bounds& mine = part[w];
    for (std::size_t i = b; i < e; ++i) {
      for (std::size_t k = 0; k < d; ++k) {
        const double x = v.at(i, k);
        mine.finite &= std::isfinite(x);
        mine.lo[k] = std::min(mine.lo[k], x);
        mine.hi[k] = std::max(mine.hi[k], x);
      }
    }
  });
  bounds all = part[0];
  for (const bounds& b : part) {
    all.finite &= b.finite;
    for (std::size_t k = 0; k < d; ++k) {
      all.lo[k] = std::min(all.lo[k], b.lo[k]);
      all.hi[k] = std::max(all.hi[k], b.hi[k]);
    }
  }
  return all;
}

void reject_non_finite(dataset_view v) {
  for (std::size_t i = 0; i < v.n; ++i) {
    for (std::size_t k = 0; k < v.d; ++k) {
      const double x = v.at(i, k);
      EPSJOIN_EXPECTS(std::isfinite(x), "the dataset: point ", i, ", dimension ", k, " is ", x,
                      "; coordinates must be finite");
    }
  }
}

// Offsets of the other dimensions and the reach along the last of every cell that may hold a
// point within eps: per dimension the gap between two cells |o| apart is (|o| - 1) cells.
std::vector<cell_grid::stencil_row> make_stencil(std::size_t d, double eps_in_cells) {
  const double limit = std::pow(eps_in_cells * (1 + stencil_slack), 2);
  const auto reach = static_cast<std::int64_t>(std::floor(1 + eps_in_cells * (1 + stencil_slack)));
  auto gap2 = [](std::int64_t o) {
    const std::int64_t g = std::max<std::int64_t>(std::abs(o) - 1, 0);
    return static_cast<double>(g * g);
  };
  std::vector<cell_grid::stencil_row> rows;
  cell_grid::stencil_row row;
  // Odometer over the first d - 1 offsets, each in [-reach, reach].
  for (std::size_t k = 0; k + 1 < d; ++k) row.offset[k] = -reach;
  for (;;) {
    double g = 0;
    for (std::size_t k = 0; k + 1 < d; ++k) g += gap2(row.offset[k]);
    if (g <= limit) {
      row.middle =
          std::all_of(row.offset.begin(), row.offset.begin() + static_cast<std::ptrdiff_t>(d - 1),
                      [](std::int64_t o) { return o == 0; });
      const auto first_nonzero =
          std::find_if(row.offset.begin(), row.offset.begin() + static_cast<std::ptrdiff_t>(d - 1),
                       [](std::int64_t o) { return o != 0; });
      row.forward = row.middle || *first_nonzero > 0;
      row.reach = 0;
      while (row.reach < reach && g + gap2(row.reach + 1) <= limit) ++row.reach;
      rows.push_back(row);
    }
    std::size_t k = d - 1;
    while (k > 0 && row.offset[k - 1] == reach) row.offset[--k] = -reach;
    if (k == 0) break;
    ++row.offset[k - 1];
  }
  auto distance = [d](const cell_grid::stencil_row& r) {
    std::int64_t s = 0;
    for (std::size_t k = 0; k + 1 < d; ++k) s += r.offset[k] * r.offset[k];
    return s;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const auto& a, const auto& b) { return distance(a) < distance(b); });
  return rows;
}

// body(x) with the input's values as their own type (a loop over them then need not ask).
template <class Body>
void with_input(dataset_view v, Body&& body) {
  if (v.type == scalar_type::f64) {
    body(static_cast<const double*>(v.data));
  } else {
    body(static_cast<const float*>(v.data));
  }
}

// Cell keys (in K when they fit), sorted with the ids stably, so ids ascend within a cell; then
// the cells' starts and keys.
template <class K>
void sort_into_cells(cell_grid& g, dataset_view v, const std::array<double, cell_max_dims>& lo,
                     double per_side, int key_bits, unsigned threads) {
  const std::size_t n = v.n, d = v.d;
  auto keys = grid::uninitialized<K>(n);
  auto keys_scratch = grid::uninitialized<K>(n);
  auto ids = grid::uninitialized<std::uint32_t>(n);
  auto ids_scratch = grid::uninitialized<std::uint32_t>(n);
  with_input(v, [&](const auto* x) {
    parallel_for(threads, n, point_grain, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t i = b; i < e; ++i) {
        std::uint64_t key = 0;
        for (std::size_t k = 0; k < d; ++k) {
          // x >= lo: the conversion's truncation is the floor.
          const auto c =
              static_cast<std::uint64_t>((static_cast<double>(x[i * d + k]) - lo[k]) * per_side);
          key += std::min(c, g.extent[k] - 1) * g.stride[k];
        }
        keys[i] = static_cast<K>(key);
        ids[i] = static_cast<std::uint32_t>(i);
      }
    });
  });
  const bool in_scratch = grid::radix_sort_pairs(keys.get(), ids.get(), keys_scratch.get(),
                                                 ids_scratch.get(), n, key_bits, threads);
  const K* sorted = in_scratch ? keys_scratch.get() : keys.get();
  g.order = std::move(in_scratch ? ids_scratch : ids);
  std::size_t cells = 1;
  for (std::size_t i = 1; i < n; ++i) cells += sorted[i] != sorted[i - 1];
  g.start.resize(cells + 1);
  g.key.resize(cells);
  for (std::size_t i = 0, c = 0; i < n; ++i) {
    if (i == 0 || sorted[i] != sorted[i - 1]) {
      g.start[c] = static_cast<std::uint32_t>(i);
      g.key[c++] = sorted[i];
    }
  }
  g.start[cells] = static_cast<std::uint32_t>(n);
}

}  // namespace

std::optional<cell_grid> build_cell_grid(dataset_view v, double eps, unsigned threads) {
  const std::size_t n = v.n, d = v.d;
  if (n == 0 || d == 0 || d > cell_max_dims || v.on_device()) return std::nullopt;
  cell_grid g;
  g.d = d;
  g.eps2 = eps * eps;
  if (!std::isfinite(g.eps2)) return std::nullopt;
  const bounds extent = bounds_of(v, threads);
  if (!extent.finite) reject_non_finite(v);
  const double side = eps / std::sqrt(static_cast<double>(d)) * side_shrink;
  const double per_side = 1 / side;
  double cells_total = 1;
  for (std::size_t k = 0; k < d; ++k) {
    const double span = (extent.hi[k] - extent.lo[k]) * per_side;
    if (!(span < max_cells_per_dim)) return std::nullopt;
    g.extent[k] = static_cast<std::uint64_t>(std::floor(span)) + 1;
    cells_total *= static_cast<double>(g.extent[k]);
  }
  if (!(cells_total < 0x1p62)) return std::nullopt;
  g.stride[d - 1] = 1;
  for (std::size_t k = d - 1; k > 0; --k) g.stride[k - 1] = g.stride[k] * g.extent[k];
  const std::uint64_t last_key = g.stride[0] * g.extent[0] - 1;
  const int key_bits = std::max(1, static_cast<int>(std::bit_width(last_key)));

  if (key_bits <= 32) {
    sort_into_cells<std::uint32_t>(g, v, extent.lo, per_side, key_bits, threads);
  } else {
    sort_into_cells<std::uint64_t>(g, v, extent.lo, per_side, key_bits, threads);
  }

  g.xs = grid::uninitialized<double>(n * d);
  with_input(v, [&](const auto* x) {
    parallel_for(threads, n, point_grain, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t pos = b; pos < e; ++pos) {
        const std::size_t i = g.order[pos];
        for (std::size_t k = 0; k < d; ++k) g.xs[pos * d + k] = static_cast<double>(x[i * d + k]);
      }
    });
  });
  const std::size_t cells = g.cells();
  g.box = grid::uninitialized<double>(cells * 2 * d);
  std::atomic<bool> compact{true};
  parallel_for(threads, cells, 1024, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t c = b; c < e; ++c) {
      double* lo = g.box.get() + c * 2 * d;
      double* hi = lo + d;
      std::copy_n(g.point(g.start[c]), d, lo);
      std::copy_n(g.point(g.start[c]), d, hi);
      for (std::size_t pos = g.start[c] + 1; pos < g.start[c + 1]; ++pos) {
        for (std::size_t k = 0; k < d; ++k) {
          lo[k] = std::min(lo[k], g.point(pos)[k]);
          hi[k] = std::max(hi[k], g.point(pos)[k]);
        }
      }
      if (farthest2(lo, hi, lo, hi, d) > g.eps2) compact.store(false, std::memory_order_relaxed);
    }
  });
  if (!compact.load()) return std::nullopt;  // never seen: the joins then run
  g.stencil = make_stencil(d, eps / side);
  return g;
}

void cell_grid::neighbours(std::size_t c, std::span<std::size_t> cursor,
                           std::vector<cell_range>& out, bool forward) const {
  out.clear();
  // The cell's coordinates: d - 1 divisions (a 64-bit division is most of this call's cost).
  std::array<std::int64_t, cell_max_dims> at{};
  const std::size_t last = d - 1;
  std::uint64_t rest = key[c];
  for (std::size_t k = 0; k < last; ++k) {
    at[k] = static_cast<std::int64_t>(rest / stride[k]);
    rest -= static_cast<std::uint64_t>(at[k]) * stride[k];
  }
  at[last] = static_cast<std::int64_t>(rest);
  const auto last_extent = static_cast<std::int64_t>(extent[last]);
  const std::size_t n_cells = cells();
  for (std::size_t r = 0; r < stencil.size(); ++r) {
    const stencil_row& row = stencil[r];
    if (forward && !row.forward) continue;
    auto base = static_cast<std::int64_t>(key[c]) - at[last];
    bool inside = true;
    for (std::size_t k = 0; k < last; ++k) {
      const std::int64_t to = at[k] + row.offset[k];
      inside &= to >= 0 && to < static_cast<std::int64_t>(extent[k]);
      base += row.offset[k] * static_cast<std::int64_t>(stride[k]);
    }
    if (!inside) continue;
    const auto first =
        forward && row.middle
            ? key[c] + 1
            : static_cast<std::uint64_t>(base + std::max<std::int64_t>(at[last] - row.reach, 0));
    const auto past =
        static_cast<std::uint64_t>(base + std::min(at[last] + row.reach, last_extent - 1));
    // Gallop from where this row's search ended for the previous cell, then bisect.
    std::size_t j = cursor[r];
    if (j > 0 && key[j - 1] >= first) j = 0;
    if (j < n_cells && key[j] < first) {
      std::size_t step = 1;
      while (j + step < n_cells && key[j + step] < first) {
        j += step;
        step *= 2;
      }
      j = static_cast<std::size_t>(
          std::lower_bound(key.begin() + static_cast<std::ptrdiff_t>(j),
                           key.begin() + static_cast<std::ptrdiff_t>(std::min(j + step, n_cells)),
                           first) -
          key.begin());
    }
    cursor[r] = j;
    std::size_t end = j;
    while (end < n_cells && key[end] <= past) ++end;
    if (end > j) out.push_back({static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(end)});
  }
}

}  // namespace epsjoin::detail
