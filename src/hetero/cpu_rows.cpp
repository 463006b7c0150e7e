// hegjoin's CPU row kernel.
//
// The arithmetic mirrors lbjoin's tiled kernel exactly: one running sum, dimension by dimension
// in the index's order, each step a fused multiply-add (nvcc contracts `sum += diff * diff`).
// Under dynamic partitioning a pair may be decided by either side from one run to the next, so
// anything less would let a pair at eps come and go between runs. std::fma rounds so on every
// processor; the v3 copy (base/cpu_isa.hpp) has it as one instruction, the baseline copy calls
// the C library's.

#include "hetero/cpu_rows.hpp"

#include <algorithm>
#include <atomic>

#include "base/cpu_isa.hpp"
#include "base/static_dim.hpp"
#include "base/within_eps.hpp"

namespace epsjoin::detail::hetero {

namespace {

// Any d (D == 0) stops once past eps^2 after each 8 dimensions; 1-8 known ones sum them all.
template <class T, int D>
inline bool within(const T* q, const T* p, int d, T eps2) {
  return within_eps<rounding::fused, D, D == 0 ? 8 : 0>(q, p, d, eps2);
}

template <class T, int D>
void join_items(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end, cpu_rows& out) {
  const auto d = static_cast<std::size_t>(v.d);
  for (std::uint32_t i = first; i < end; ++i) {
    const host_item& item = v.items[i];
    const host_range* ranges = v.item_ranges[i];
    const std::uint32_t n_ranges = v.item_range_count[i];
    for (std::uint32_t pos = item.first; pos < item.first + item.count; ++pos) {
      const T* q = v.query_points.data() + pos * d;
      const std::size_t row_start = out.neighbors.size();
      for (std::uint32_t r = 0; r < n_ranges; ++r) {
        host_range range = ranges[r];
        // Halving: the own cell's range starts after the item's first query; this query takes
        // only the positions after its own, as the GPU's kernels do.
        if (v.halving && r + 1 == n_ranges) range.begin = std::max(range.begin, pos + 1);
        if (range.end <= range.begin) continue;
        out.candidates += range.end - range.begin;
        for (std::uint32_t j = range.begin; j < range.end; ++j) {
          if (!v.halving && v.self_join && j == pos) continue;
          if (within<T, D>(q, v.data_points.data() + j * d, v.d, v.eps2)) {
            out.neighbors.push_back(j);
            if (v.halving) {
              std::atomic_ref(v.reverse_counts[j]).fetch_add(1, std::memory_order_relaxed);
            }
          }
        }
      }
      out.positions.push_back(pos);
      out.counts.push_back(static_cast<std::uint32_t>(out.neighbors.size() - row_start));
    }
  }
}

/// Keeps, in place and in order, the data positions of `found[0, m)` within eps of query position
/// `pos` by within()'s rounding; returns how many. The super-ego side's filter is wider than eps
/// and rounds its own way; this makes its answer the grid side's (and the GPU's).
template <class T, int D>
std::size_t keep_within(const host_join_view<T>& v, std::uint32_t pos, std::uint32_t* found,
                        std::size_t m) {
  const auto d = static_cast<std::size_t>(v.d);
  const T* q = v.query_points.data() + pos * d;
  std::size_t kept = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const std::uint32_t j = found[k];
    found[kept] = j;
    kept += within<T, D>(q, v.data_points.data() + j * d, v.d, v.eps2) ? 1 : 0;
  }
  return kept;
}

template <class T>
std::size_t keep_within_any_d(const host_join_view<T>& v, std::uint32_t pos,
                              std::uint32_t* found, std::size_t m) {
  return with_static_dim<8>(
      v.d, [&]<int D>() { return keep_within<T, D>(v, pos, found, m); });
}

template <class T>
void join_items_any_d(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end,
                      cpu_rows& out) {
  // The dimensionalities hegjoin is built for (the papers' 2-8) get an unrolled distance.
  with_static_dim<8>(v.d, [&]<int D>() { join_items<T, D>(v, first, end, out); });
}

// The v3 copies: `flatten` inlines the kernel (and its std::fma, one instruction there) into them.
template <class T>
EPSJOIN_ISA_V3 __attribute__((flatten)) void join_items_v3(const host_join_view<T>& v,
                                                           std::uint32_t first, std::uint32_t end,
                                                           cpu_rows& out) {
  join_items_any_d(v, first, end, out);
}

template <class T>
EPSJOIN_ISA_V3 __attribute__((flatten)) std::size_t keep_within_v3(const host_join_view<T>& v,
                                                                   std::uint32_t pos,
                                                                   std::uint32_t* found,
                                                                   std::size_t m) {
  return keep_within_any_d(v, pos, found, m);
}

}  // namespace

template <class T>
void join_items_on_cpu(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end,
                       cpu_rows& out) {
  (isa::cpu_has_v3() ? join_items_v3<T> : join_items_any_d<T>)(v, first, end, out);
}

template <class T>
std::size_t keep_within_on_cpu(const host_join_view<T>& v, std::uint32_t pos,
                               std::uint32_t* found, std::size_t m) {
  return (isa::cpu_has_v3() ? keep_within_v3<T> : keep_within_any_d<T>)(v, pos, found, m);
}

template void join_items_on_cpu(const host_join_view<float>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);
template void join_items_on_cpu(const host_join_view<double>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);

template std::size_t keep_within_on_cpu(const host_join_view<float>&, std::uint32_t,
                                        std::uint32_t*, std::size_t);
template std::size_t keep_within_on_cpu(const host_join_view<double>&, std::uint32_t,
                                        std::uint32_t*, std::size_t);

}  // namespace epsjoin::detail::hetero
