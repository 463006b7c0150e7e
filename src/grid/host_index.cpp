#include "grid/host_index.hpp"

#include <algorithm>
#include <bit>

#include "base/expects.hpp"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/timer.hpp"
#include "grid/radix_sort.hpp"

namespace epsjoin::detail::grid {

namespace {

constexpr std::size_t grain = std::size_t{1} << 15;

template <class K, class T>
void compute_ids(const T* values, std::size_t n, const geometry& geo, unsigned threads, K* keys,
                 std::uint32_t* ids) {
  const std::size_t d = static_cast<std::size_t>(geo.d);
  detail::parallel_for(threads, n, grain, [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t i = begin; i < end; ++i) {
      keys[i] = static_cast<K>(point_cell_id(geo, values + i * d));
      ids[i] = static_cast<std::uint32_t>(i);
    }
  });
}

template <class T>
void gather_points(const T* values, std::size_t d, std::span<const int> dim_order,
                   const std::vector<std::uint32_t>& permutation, unsigned threads,
                   std::vector<double>& points) {
  const std::size_t n = permutation.size();
  points.resize(n * d);
  detail::parallel_for(threads, n, grain, [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t p = begin; p < end; ++p) {
      // Rows are read in cell order (at random): prefetch ahead so the misses overlap.
      if (p + 16 < end) __builtin_prefetch(values + static_cast<std::size_t>(permutation[p + 16]) * d);
      const T* row = values + static_cast<std::size_t>(permutation[p]) * d;
      double* out = points.data() + p * d;
      for (std::size_t j = 0; j < d; ++j) out[j] = static_cast<double>(row[dim_order[j]]);
    }
  });
}

// Cells from the sorted keys: a cell starts where the key changes. Chunked so the scan is
// parallel: count starts per chunk, scan, then write.
template <class K>
void find_cells(const K* keys, std::size_t n_in, unsigned threads, host_index& index) {
  const std::size_t chunks = std::clamp<std::size_t>(n_in / grain, 1, std::max(1u, threads) * 4);
  const std::size_t len = (n_in + chunks - 1) / chunks;
  std::vector<std::size_t> starts(chunks + 1, 0);
  auto is_start = [&](std::size_t i) { return i == 0 || keys[i] != keys[i - 1]; };
  detail::parallel_for(threads, chunks, 1, [&](std::size_t c, std::size_t, unsigned) {
    std::size_t count = 0;
    for (std::size_t i = c * len; i < std::min(n_in, (c + 1) * len); ++i) count += is_start(i);
    starts[c + 1] = count;
  });
  for (std::size_t c = 0; c < chunks; ++c) starts[c + 1] += starts[c];
  index.cell_ids.resize(starts[chunks]);
  index.cell_begin.resize(starts[chunks] + 1);
  detail::parallel_for(threads, chunks, 1, [&](std::size_t c, std::size_t, unsigned) {
    std::size_t cell = starts[c];
    for (std::size_t i = c * len; i < std::min(n_in, (c + 1) * len); ++i) {
      if (is_start(i)) {
        index.cell_ids[cell] = keys[i];
        index.cell_begin[cell] = static_cast<std::uint32_t>(i);
        ++cell;
      }
    }
  });
  index.cell_begin.back() = static_cast<std::uint32_t>(n_in);
}

void build_masks(unsigned threads, host_index& index) {
  const geometry& g = index.geo;
  index.masks.assign(static_cast<std::size_t>(g.k), {});
  index.mask_bits.assign(static_cast<std::size_t>(g.k), {});
  const std::size_t m = index.n_cells();
  detail::parallel_for(threads, static_cast<std::size_t>(g.k), 1,
                       [&](std::size_t j, std::size_t, unsigned) {
    std::vector<std::uint32_t>& mask = index.masks[j];
    const std::uint64_t cells = g.cells[j];
    auto coord = [&](std::size_t c) {
      return static_cast<std::uint32_t>((index.cell_ids[c] / g.stride[j]) % cells);
    };
    if (cells <= 64 * m + 4096) {
      // A bitmap over the dimension's cells: O(m + cells) and cells is O(m) here.
      std::vector<std::uint64_t> bits((cells + 63) / 64, 0);
      for (std::size_t c = 0; c < m; ++c) {
        const std::uint32_t x = coord(c);
        bits[x >> 6] |= std::uint64_t{1} << (x & 63);
      }
      for (std::size_t w = 0; w < bits.size(); ++w) {
        for (std::uint64_t b = bits[w]; b != 0; b &= b - 1) {
          mask.push_back(static_cast<std::uint32_t>(w * 64 + std::countr_zero(b)));
        }
      }
      index.mask_bits[j] = std::move(bits);
    } else {
      mask.resize(m);
      for (std::size_t c = 0; c < m; ++c) mask[c] = coord(c);
      std::sort(mask.begin(), mask.end());
      mask.erase(std::unique(mask.begin(), mask.end()), mask.end());
    }
  });
}

// Cell ids of every point, sorted with the point ids; then the cells and the permutation.
template <class K>
void sort_points(dataset_view data, const geometry& geo, unsigned threads, host_index& index,
                 build_timings& t, detail::stopwatch& clock, memory_budget* budget) {
  const std::size_t n = data.n;
  const host_charge scratch =
      budget != nullptr ? budget->charge_host(sort_bytes(n, geo), "sorting the points into cells")
                        : host_charge();
  auto keys = uninitialized<K>(n), keys_scratch = uninitialized<K>(n);
  auto ids = uninitialized<std::uint32_t>(n), ids_scratch = uninitialized<std::uint32_t>(n);
  if (data.type == scalar_type::f64) {
    compute_ids(static_cast<const double*>(data.data), n, geo, threads, keys.get(), ids.get());
  } else {
    compute_ids(static_cast<const float*>(data.data), n, geo, threads, keys.get(), ids.get());
  }
  t.ids += clock.seconds();
  clock.restart();

  // Ids are < total_cells; total_cells itself marks a point outside the grid and sorts last.
  const bool in_scratch = radix_sort_pairs(keys.get(), ids.get(), keys_scratch.get(),
                                           ids_scratch.get(), n, std::bit_width(geo.total_cells),
                                           threads);
  const K* sorted_keys = in_scratch ? keys_scratch.get() : keys.get();
  const std::uint32_t* sorted_ids = in_scratch ? ids_scratch.get() : ids.get();
  t.sort += clock.seconds();
  clock.restart();

  std::size_t n_in = n;
  while (n_in > 0 && sorted_keys[n_in - 1] == static_cast<K>(geo.total_cells)) --n_in;
  index.outside = n - n_in;
  find_cells(sorted_keys, n_in, threads, index);
  index.permutation.assign(sorted_ids, sorted_ids + n_in);
  t.cells += clock.seconds();
  clock.restart();
}

}  // namespace

std::size_t host_index::lower_bound(std::uint64_t id, std::size_t lo, std::size_t hi) const noexcept {
  // Branch-free halving: the loads of the next step do not wait on a mispredicted branch.
  const std::uint64_t* base = cell_ids.data() + lo;
  std::size_t len = hi - lo;
  while (len > 1) {
    const std::size_t half = len / 2;
    base = base[half - 1] < id ? base + half : base;
    len -= half;
  }
  std::size_t pos = static_cast<std::size_t>(base - cell_ids.data());
  if (len == 1 && *base < id) ++pos;
  return pos;
}

std::size_t host_index::find_in(std::uint64_t id, std::size_t lo, std::size_t hi) const noexcept {
  if (lo >= hi) return npos;
  const std::size_t pos = lower_bound(id, lo, hi);
  return pos < hi && cell_ids[pos] == id ? pos : npos;
}

bool host_index::mask_has(int j, std::uint32_t c) const noexcept {
  const auto& bits = mask_bits[static_cast<std::size_t>(j)];
  if (!bits.empty()) return (bits[c >> 6] >> (c & 63)) & 1u;
  const auto& m = masks[static_cast<std::size_t>(j)];
  return std::binary_search(m.begin(), m.end(), c);
}

cell_box host_index::masked_box(const std::uint32_t* own) const noexcept {
  cell_box box = neighbor_box(geo, own);
  if (masks.empty()) return box;
  for (int j = 0; j < geo.k; ++j) {
    if (box.lo[j] < own[j] && !mask_has(j, box.lo[j])) box.lo[j] = own[j];
    if (box.hi[j] > own[j] && !mask_has(j, box.hi[j])) box.hi[j] = own[j];
  }
  return box;
}

host_index build_host_index(dataset_view data, const geometry& geo, std::span<const int> dim_order,
                            const build_options& options, build_timings* timings) {
  EPSJOIN_EXPECTS(data.n == 0 || static_cast<int>(data.d) == geo.d, "grid: points have ", data.d,
                  " dimensions, the geometry ", geo.d);
  EPSJOIN_EXPECTS(dim_order.size() == static_cast<std::size_t>(geo.d),
                  "grid: dim_order must list all ", geo.d, " columns");
  const unsigned threads = std::max(1u, options.threads);
  build_timings local;
  build_timings& t = timings != nullptr ? *timings : local;
  detail::stopwatch clock;

  host_index index;
  index.geo = geo;
  index.dim_order.assign(dim_order.begin(), dim_order.end());

  // Ids below 2^32 sort as 32-bit keys: half the bytes to move.
  if (geo.total_cells < (std::uint64_t{1} << 32)) {
    sort_points<std::uint32_t>(data, geo, threads, index, t, clock, options.budget);
  } else {
    sort_points<std::uint64_t>(data, geo, threads, index, t, clock, options.budget);
  }

  if (options.copy_points) {
    if (data.type == scalar_type::f64) {
      gather_points(static_cast<const double*>(data.data), data.d, dim_order, index.permutation,
                    threads, index.points);
    } else {
      gather_points(static_cast<const float*>(data.data), data.d, dim_order, index.permutation,
                    threads, index.points);
    }
  }
  t.gather += clock.seconds();
  clock.restart();

  if (options.masks) build_masks(threads, index);
  t.masks += clock.seconds();
  return index;
}

}  // namespace epsjoin::detail::grid
