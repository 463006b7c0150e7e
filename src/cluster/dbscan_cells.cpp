#include "cluster/dbscan_cells.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/timer.hpp"
#include "cluster/cell_grid.hpp"
#include "cluster/union_find.hpp"

namespace epsjoin::detail {

namespace {

constexpr std::uint32_t none = UINT32_MAX;
using progress_fn = std::function<void(double)>;

// The caller's progress over [from, to] of the whole (and its way to stop the run: a callback
// that throws ends the loop that called it), or none.
progress_fn progress_span(const progress_fn& progress, double from, double to) {
  if (!progress) return {};
  return [&progress, from, to](double f) { progress(from + (to - from) * f); };
}

// Vectors whose elements are left uninitialised, for arrays that a parallel loop fills whole:
// that loop is then their first touch, on every thread, instead of a zero-fill on one.
template <class T>
struct uninitialised_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninitialised_allocator<U>;
  };
  template <class U>
  void construct(U*) noexcept {}
  template <class U, class... Args>
  void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using filled_later = std::vector<T, uninitialised_allocator<T>>;

// Cells a chunk: a cell's work varies from nothing (a dense cell) to a scan of its neighbours.
constexpr std::size_t cell_grain = 256;
constexpr std::size_t point_grain = std::size_t{1} << 14;

// Host bytes a point: the sort's keys and ids with their scratch (24 at most), the ids in cell
// order (4), the labels (8), the core flags by id and by position (2), the link to a root or a
// core neighbour (4), and 8 a dimension for the coordinates in cell order. A non-empty cell (at
// most one a point): its start and key (12) and box (16 a dimension, later its core points'
// box) in the grid, then the union-find, the first core position and the cluster number (12).
constexpr std::uint64_t point_bytes = 42, point_bytes_per_dim = 8;
constexpr std::uint64_t grid_cell_bytes = 12, grid_cell_bytes_per_dim = 16;
constexpr std::uint64_t cell_bytes = grid_cell_bytes + 12;
constexpr std::uint64_t cell_bytes_per_dim = grid_cell_bytes_per_dim;

bool fits(const resources& res, std::uint64_t bytes) {
  return bytes <= memory_budget(res.memory(), {}).host_available();
}

// The grid's accessors and the distance test with the dimension fixed at compile time: the
// loops below are mostly a few distances each, which a loop over a run-time d slows by half.
template <std::size_t D>
const double* point(const cell_grid& g, std::size_t pos) {
  return g.xs.get() + pos * D;
}
template <std::size_t D>
const double* lower(const cell_grid& g, std::size_t c) {
  return g.box.get() + c * 2 * D;
}
template <std::size_t D>
const double* upper(const cell_grid& g, std::size_t c) {
  return g.box.get() + c * 2 * D + D;
}
template <std::size_t D>
bool within(const double* a, const double* b, double eps2) {
  return within_squared(a, b, D, eps2);
}

// A sweep over cells [b, e) with their stencils: each worker's row cursors carry on from cell to
// cell (cell_grid::neighbours).
struct stencil_walk {
  explicit stencil_walk(const cell_grid& g) : grid(g), cursor(g.stencil.size(), 0) {}
  const std::vector<cell_grid::cell_range>& of(std::size_t c, bool forward = false) {
    grid.neighbours(c, cursor, near, forward);
    return near;
  }
  const cell_grid& grid;
  std::vector<std::size_t> cursor;
  std::vector<cell_grid::cell_range> near;
};

// Core flags by position: whole dense cells at once, other points by an early-exit count.
template <std::size_t D>
void find_core_points(const cell_grid& g, std::size_t min_samples, unsigned threads,
                      filled_later<std::uint8_t>& core_at, const progress_fn& progress) {
  constexpr std::size_t d = D;
  parallel_for(
      threads, g.cells(), cell_grain,
      [&](std::size_t b, std::size_t e, unsigned) {
        stencil_walk walk(g);
        std::vector<std::uint32_t> partial;
        for (std::size_t c = b; c < e; ++c) {
          const std::size_t own = g.size(c);
          if (own >= min_samples) {
            std::fill(core_at.begin() + g.start[c], core_at.begin() + g.start[c + 1], 1);
            continue;
          }
          // Neighbour cells wholly within eps of this one count for each of its points, those
          // wholly beyond for none; only the others are looked at point by point. Each point's
          // count stops as soon as it reaches min_samples (core) or cannot any more (not core).
          std::size_t sure = own;  // each point itself and its cell-mates
          std::size_t possible = own;
          partial.clear();
          for (const auto [first, past] : walk.of(c)) {
            for (std::uint32_t j = first; j < past && sure < min_samples; ++j) {
              if (j == c || nearest2(lower<D>(g, c), upper<D>(g, c), lower<D>(g, j), upper<D>(g, j),
                                     d) > g.eps2)
                continue;
              possible += g.size(j);
              if (farthest2(lower<D>(g, c), upper<D>(g, c), lower<D>(g, j), upper<D>(g, j), d) <=
                  g.eps2) {
                sure += g.size(j);
              } else {
                partial.push_back(j);
              }
            }
            if (sure >= min_samples) break;  // every point of the cell is core
          }
          if (sure >= min_samples || possible < min_samples) {
            std::fill(core_at.begin() + g.start[c], core_at.begin() + g.start[c + 1],
                      sure >= min_samples);
            continue;
          }
          for (std::size_t pos = g.start[c]; pos < g.start[c + 1]; ++pos) {
            const double* p = point<D>(g, pos);
            std::size_t count = sure, reachable = possible;
            for (std::uint32_t j : partial) {
              if (count >= min_samples || reachable < min_samples) break;
              if (nearest2(p, lower<D>(g, j), upper<D>(g, j), d) > g.eps2) {
                reachable -= g.size(j);
                continue;
              }
              if (farthest2(p, lower<D>(g, j), upper<D>(g, j), d) <= g.eps2) {
                count += g.size(j);
                continue;
              }
              for (std::size_t q = g.start[j]; q < g.start[j + 1]; ++q) {
                if (within<D>(p, point<D>(g, q), g.eps2)) {
                  if (++count >= min_samples) break;
                } else if (--reachable < min_samples) {
                  break;
                }
              }
            }
            core_at[pos] = count >= min_samples;
          }
        }
      },
      progress);
}

struct core_cells {
  filled_later<std::uint32_t> first;   // [cells] position of the first core point, or none
  filled_later<std::uint32_t> parent;  // [cells] the union-find over cells with a core point
};

template <std::size_t D>
core_cells summarise_core(cell_grid& g, const filled_later<std::uint8_t>& core_at,
                          unsigned threads) {
  constexpr std::size_t d = D;
  const std::size_t cells = g.cells();
  core_cells k;
  k.first.resize(cells);
  k.parent.resize(cells);
  parallel_for(threads, cells, 1024, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t c = b; c < e; ++c) {
      // The count is done with the cells' boxes: a cell with core points now keeps theirs.
      double* lo = g.box.get() + c * 2 * d;
      double* hi = lo + d;
      k.first[c] = none;
      for (std::size_t pos = g.start[c]; pos < g.start[c + 1]; ++pos) {
        if (!core_at[pos]) continue;
        const double* p = point<D>(g, pos);
        if (k.first[c] == none) {
          k.first[c] = static_cast<std::uint32_t>(pos);
          std::copy_n(p, d, lo);
          std::copy_n(p, d, hi);
        }
        for (std::size_t i = 0; i < d; ++i) {
          lo[i] = std::min(lo[i], p[i]);
          hi[i] = std::max(hi[i], p[i]);
        }
      }
      k.parent[c] =
          k.first[c] == none ? concurrent_union_find::not_member : static_cast<std::uint32_t>(c);
    }
  });
  return k;
}

// Whether some core point of cell a is within eps of some core point of cell b.
template <std::size_t D>
bool core_pair_within(const cell_grid& g, const core_cells& k,
                      const filled_later<std::uint8_t>& core_at, std::size_t a, std::size_t b) {
  constexpr std::size_t d = D;
  const double* lo_b = g.box.get() + b * 2 * d;
  const double* hi_b = lo_b + d;
  for (std::size_t p = k.first[a]; p < g.start[a + 1]; ++p) {
    if (!core_at[p] || nearest2(point<D>(g, p), lo_b, hi_b, d) > g.eps2) continue;
    for (std::size_t q = k.first[b]; q < g.start[b + 1]; ++q) {
      if (core_at[q] && within<D>(point<D>(g, p), point<D>(g, q), g.eps2)) return true;
    }
  }
  return false;
}

template <std::size_t D>
void merge_cells(const cell_grid& g, core_cells& k, const filled_later<std::uint8_t>& core_at,
                 unsigned threads, const progress_fn& progress) {
  constexpr std::size_t d = D;
  const concurrent_union_find sets(k.parent);
  parallel_for(
      threads, g.cells(), cell_grain,
      [&](std::size_t b, std::size_t e, unsigned) {
        stencil_walk walk(g);
        for (std::size_t c = b; c < e; ++c) {
          if (k.first[c] == none) continue;
          const double* lo_c = g.box.get() + c * 2 * d;
          for (const auto [first, past] : walk.of(c, true)) {
            for (std::uint32_t j = first; j < past; ++j) {
              if (k.first[j] == none) continue;
              if (sets.find(static_cast<std::uint32_t>(c)) == sets.find(j)) continue;
              const double* lo_j = g.box.get() + std::size_t{j} * 2 * d;
              if (nearest2(lo_c, lo_c + d, lo_j, lo_j + d, d) > g.eps2) continue;
              if (farthest2(lo_c, lo_c + d, lo_j, lo_j + d, d) <= g.eps2 ||
                  core_pair_within<D>(g, k, core_at, c, j)) {
                sets.unite(static_cast<std::uint32_t>(c), j);
              }
            }
          }
        }
      },
      progress);
}

// link[id] of each non-core point: its core neighbour of smallest id, or none.
template <std::size_t D>
void place_border_points(const cell_grid& g, const core_cells& k,
                         const filled_later<std::uint8_t>& core_at, unsigned threads,
                         filled_later<std::uint32_t>& link, const progress_fn& progress) {
  constexpr std::size_t d = D;
  parallel_for(
      threads, g.cells(), cell_grain,
      [&](std::size_t b, std::size_t e, unsigned) {
        stencil_walk walk(g);
        // The neighbour cells with a core point near this cell, by their smallest core id.
        std::vector<std::pair<std::uint32_t, std::uint32_t>> by_first_core;
        for (std::size_t c = b; c < e; ++c) {
          bool listed = false;
          for (std::size_t pos = g.start[c]; pos < g.start[c + 1]; ++pos) {
            if (core_at[pos]) continue;
            if (!listed) {
              // The box of the cell's non-core points (its own box now bounds its core points).
              std::array<double, D> lo, hi;
              std::copy_n(point<D>(g, pos), d, lo.begin());
              std::copy_n(point<D>(g, pos), d, hi.begin());
              for (std::size_t q = pos + 1; q < g.start[c + 1]; ++q) {
                if (core_at[q]) continue;
                for (std::size_t i = 0; i < d; ++i) {
                  lo[i] = std::min(lo[i], point<D>(g, q)[i]);
                  hi[i] = std::max(hi[i], point<D>(g, q)[i]);
                }
              }
              by_first_core.clear();
              for (const auto [first, past] : walk.of(c)) {
                for (std::uint32_t j = first; j < past; ++j) {
                  if (k.first[j] == none ||
                      nearest2(lo.data(), hi.data(), lower<D>(g, j), upper<D>(g, j), d) > g.eps2) {
                    continue;
                  }
                  by_first_core.emplace_back(g.order[k.first[j]], j);
                }
              }
              std::sort(by_first_core.begin(), by_first_core.end());
              listed = true;
            }
            const double* p = point<D>(g, pos);
            std::uint32_t best = none;
            // Ids ascend within a cell: once a cell's smallest core id is no better than the
            // best found, neither is any later cell's.
            for (const auto& [first_core, j] : by_first_core) {
              if (first_core >= best) break;
              if (nearest2(p, lower<D>(g, j), upper<D>(g, j), d) > g.eps2) continue;
              for (std::size_t q = k.first[j]; q < g.start[j + 1] && g.order[q] < best; ++q) {
                if (core_at[q] && within<D>(p, point<D>(g, q), g.eps2)) best = g.order[q];
              }
            }
            link[g.order[pos]] = best;
          }
        }
      },
      progress);
}

template <class Body>
void with_dims(std::size_t d, Body&& body) {
  static_assert(cell_max_dims == 3);
  switch (d) {
    case 1:
      body(std::integral_constant<std::size_t, 1>{});
      break;
    case 2:
      body(std::integral_constant<std::size_t, 2>{});
      break;
    default:
      body(std::integral_constant<std::size_t, 3>{});
      break;
  }
}

}  // namespace

std::optional<dbscan_result> dbscan_on_cells(resources& res, dataset_view points, double eps,
                                             std::size_t min_samples,
                                             const std::function<void(double)>& progress) {
  const std::size_t n = points.n, d = points.d;
  // Ids are 32-bit: beyond them the joins give their own error.
  if (n == 0 || n > std::size_t{UINT32_MAX} - 1 || d == 0 || d > cell_max_dims) return std::nullopt;
  const std::uint64_t per_point = point_bytes + point_bytes_per_dim * d;
  if (!fits(res, n * (per_point + grid_cell_bytes + grid_cell_bytes_per_dim * d)))
    return std::nullopt;
  const unsigned threads = res.threads();
  stopwatch clock;
  std::optional<cell_grid> grid = build_cell_grid(points, eps, threads);
  if (!grid) return std::nullopt;
  if (progress) progress(0.1);
  cell_grid& g = *grid;
  const std::size_t cells = g.cells();
  if (!fits(res, n * per_point + cells * (cell_bytes + cell_bytes_per_dim * d))) {
    return std::nullopt;
  }

  dbscan_result r;
  r.engine = "cpu-grid";
  r.merge = "cells";
  r.labels.resize(n);
  r.core.resize(n);
  filled_later<std::uint8_t> core_at(n);  // each position written once by the count
  with_dims(d, [&](auto dims) {
    find_core_points<dims()>(g, min_samples, threads, core_at, progress_span(progress, 0.1, 0.4));
  });
  std::atomic<std::size_t> n_core{0};
  parallel_for(threads, n, point_grain, [&](std::size_t b, std::size_t e, unsigned) {
    std::size_t mine = 0;
    for (std::size_t pos = b; pos < e; ++pos) {
      r.core[g.order[pos]] = core_at[pos];
      mine += core_at[pos];
    }
    n_core.fetch_add(mine, std::memory_order_relaxed);
  });
  r.n_core = n_core.load();
  r.stages.push_back({"count", clock.seconds()});

  clock.restart();
  core_cells k;
  filled_later<std::uint32_t> link(n);  // non-core points by the border pass, core by the labels
  with_dims(d, [&](auto dims) {
    k = summarise_core<dims()>(g, core_at, threads);
    merge_cells<dims()>(g, k, core_at, threads, progress_span(progress, 0.4, 0.6));
    place_border_points<dims()>(g, k, core_at, threads, link, progress_span(progress, 0.6, 0.8));
  });
  r.stages.push_back({"merge", clock.seconds()});

  // Each core point to its cell's root (the smallest cell of its set), each border point to
  // its core neighbour's, then clusters numbered by their smallest core point.
  clock.restart();
  const concurrent_union_find sets(k.parent);
  parallel_for(threads, cells, 1024, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t c = b; c < e; ++c) {
      if (k.first[c] == none) continue;
      const std::uint32_t root = sets.find(static_cast<std::uint32_t>(c));
      for (std::size_t pos = k.first[c]; pos < g.start[c + 1]; ++pos) {
        if (core_at[pos]) link[g.order[pos]] = root;
      }
    }
  });
  parallel_for(threads, n, point_grain, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      if (!r.core[i] && link[i] != none) link[i] = link[link[i]];
    }
  });
  // Numbers in the order of each cluster's first core point, as scikit-learn's.
  std::vector<std::uint32_t> number(cells, none);
  std::uint32_t clusters = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!r.core[i]) continue;
    std::uint32_t& k_number = number[link[i]];
    if (k_number == none) k_number = clusters++;
    r.labels[i] = k_number;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (r.core[i]) continue;
    if (link[i] == none) {
      r.labels[i] = -1;
      ++r.n_noise;
    } else {
      ++r.n_border;
      r.labels[i] = number[link[i]];
    }
  }
  r.n_clusters = clusters;
  r.stages.push_back({"label", clock.seconds()});
  return r;
}

}  // namespace epsjoin::detail
