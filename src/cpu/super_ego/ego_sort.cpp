#include "cpu/super_ego/ego_sort.hpp"

#include <algorithm>
#include <bit>

#include "base/parallel.hpp"
#include "cpu/super_ego/parallel_sort.hpp"

namespace epsjoin::detail::ego {

grid make_grid(double eps, std::span<const double> lo, std::span<const double> hi) {
  grid g;
  const std::size_t d = lo.size();
  g.origin.resize(d);
  g.inv_width.resize(d);
  g.max_cell.resize(d);
  const double min_width = eps * (1.0 + 0x1p-20);
  for (std::size_t k = 0; k < d; ++k) {
    const double extent = hi[k] - lo[k];
    if (!(extent >= 0) || !std::isfinite(extent) || !std::isfinite(min_width)) {
      // No points (lo above hi), or coordinates spanning more than the float64 range: one
      // cell, no pruning.
      g.origin[k] = 0.0;
      g.inv_width[k] = 0.0;
    } else {
      g.origin[k] = lo[k];
      g.inv_width[k] = 1.0 / std::max(min_width, extent * 0x1p-30);
    }
    g.max_cell[k] = g.cell(hi[k], k);
  }
  return g;
}

key_layout make_key_layout(const grid& g) {
  key_layout layout;
  std::vector<unsigned> width;
  for (std::size_t k = 0; k < g.d(); ++k) {
    const auto w = static_cast<unsigned>(std::bit_width(static_cast<std::uint32_t>(g.max_cell[k])));
    if (layout.bits + w > 64) break;
    layout.bits += w;
    width.push_back(w);
  }
  layout.packed = width.size();
  layout.shift.resize(layout.packed);
  unsigned used = 0;
  for (std::size_t k = 0; k < layout.packed; ++k) {
    used += width[k];
    layout.shift[k] = layout.bits - used;
  }
  return layout;
}

template <class T>
std::vector<std::uint32_t> ego_order(const T* values, std::size_t n, const grid& g,
                                     sort_method method, unsigned threads) {
  const std::size_t d = g.d();
  const key_layout layout = make_key_layout(g);
  big_vector<key_index> items(n);
  parallel_for(threads, n, 1 << 14, [&](std::size_t i0, std::size_t i1, unsigned) {
    for (std::size_t i = i0; i < i1; ++i) {
      const T* p = values + i * d;
      std::uint64_t key = 0;
      for (std::size_t k = 0; k < layout.packed; ++k) {
        key |= static_cast<std::uint64_t>(g.cell(static_cast<double>(p[k]), k)) << layout.shift[k];
      }
      items[i] = {key, static_cast<std::uint32_t>(i)};
    }
  });

  // Order of two points whose keys are equal: the dimensions the key does not hold.
  auto tail_less = [&](std::uint32_t a, std::uint32_t b) {
    const T* pa = values + std::size_t{a} * d;
    const T* pb = values + std::size_t{b} * d;
    for (std::size_t k = layout.packed; k < d; ++k) {
      const std::int32_t ca = g.cell(static_cast<double>(pa[k]), k);
      const std::int32_t cb = g.cell(static_cast<double>(pb[k]), k);
      if (ca != cb) return ca < cb;
    }
    return false;
  };
  auto full_less = [&](const key_index& a, const key_index& b) {
    if (a.key != b.key) return a.key < b.key;
    return layout.packed < d && tail_less(a.index, b.index);
  };

  if (method == sort_method::merge) {
    parallel_stable_sort(items, full_less, threads);
  } else {
    radix_sort_by_key(items, layout.bits, threads);
    if (layout.packed < d) {
      // Runs of equal keys, sorted by the remaining dimensions: small runs many at a time,
      // a run as large as a thread's share on all threads.
      std::vector<std::size_t> starts;
      std::vector<std::size_t> large;
      const std::size_t big = std::max<std::size_t>(n / std::max(1u, threads), 1 << 14);
      for (std::size_t s = 0; s < n;) {
        std::size_t e = s + 1;
        while (e < n && items[e].key == items[s].key) ++e;
        if (e - s > 1) (e - s >= big ? large : starts).push_back(s);
        s = e;
      }
      auto run_end = [&](std::size_t s) {
        std::size_t e = s + 1;
        while (e < n && items[e].key == items[s].key) ++e;
        return e;
      };
      parallel_for(threads, starts.size(), 64, [&](std::size_t r0, std::size_t r1, unsigned) {
        for (std::size_t r = r0; r < r1; ++r) {
          const std::size_t s = starts[r];
          std::stable_sort(items.begin() + static_cast<std::ptrdiff_t>(s),
                           items.begin() + static_cast<std::ptrdiff_t>(run_end(s)), full_less);
        }
      });
      for (std::size_t s : large) {
        big_vector<key_index> run(items.begin() + static_cast<std::ptrdiff_t>(s),
                                  items.begin() + static_cast<std::ptrdiff_t>(run_end(s)));
        parallel_stable_sort(run, full_less, threads);
        std::copy(run.begin(), run.end(), items.begin() + static_cast<std::ptrdiff_t>(s));
      }
    }
  }

  std::vector<std::uint32_t> order(n);
  parallel_for(threads, n, 1 << 16, [&](std::size_t i0, std::size_t i1, unsigned) {
    for (std::size_t i = i0; i < i1; ++i) order[i] = items[i].index;
  });
  return order;
}

template std::vector<std::uint32_t> ego_order<float>(const float*, std::size_t, const grid&,
                                                     sort_method, unsigned);
template std::vector<std::uint32_t> ego_order<double>(const double*, std::size_t, const grid&,
                                                      sort_method, unsigned);

}  // namespace epsjoin::detail::ego
