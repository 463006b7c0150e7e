#include "hetero/cpu_rows.hpp"

#include <type_traits>

#include "core/parallel.hpp"

namespace epsjoin::detail::hetero {

namespace fma_isa {
void join_items_f32(const host_join_view<float>&, std::uint32_t, std::uint32_t, cpu_rows&);
void join_items_f64(const host_join_view<double>&, std::uint32_t, std::uint32_t, cpu_rows&);
}  // namespace fma_isa
namespace generic_isa {
void join_items_f32(const host_join_view<float>&, std::uint32_t, std::uint32_t, cpu_rows&);
void join_items_f64(const host_join_view<double>&, std::uint32_t, std::uint32_t, cpu_rows&);
}  // namespace generic_isa

namespace {

bool has_fma() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  static const bool fma = __builtin_cpu_supports("fma");
  return fma;
#else
  return false;
#endif
}

}  // namespace

template <class T>
std::vector<std::uint64_t> item_candidates(const host_join_view<T>& v, unsigned threads) {
  // Per cell first: a cell's ranges are walked once however many items it has (at 8-D a cell
  // has thousands of ranges).
  const std::size_t cells = v.range_offsets.empty() ? 0 : v.range_offsets.size() - 1;
  std::vector<std::uint64_t> per_cell(cells, 0);
  parallel_for(threads, cells, 1024, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t c = b; c < e; ++c) {
      std::uint64_t sum = 0;
      for (std::uint32_t r = v.range_offsets[c]; r < v.range_offsets[c + 1]; ++r) {
        sum += v.ranges[r].end - v.ranges[r].begin;
      }
      per_cell[c] = sum;
    }
  });
  std::vector<std::uint64_t> out(v.items.size());
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    out[i] = per_cell[v.items[i].cell] * v.items[i].count;
  }
  return out;
}

template <class T>
void join_items_on_cpu(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end,
                       cpu_rows& out) {
  if constexpr (std::is_same_v<T, float>) {
    (has_fma() ? fma_isa::join_items_f32 : generic_isa::join_items_f32)(v, first, end, out);
  } else {
    (has_fma() ? fma_isa::join_items_f64 : generic_isa::join_items_f64)(v, first, end, out);
  }
}

template std::vector<std::uint64_t> item_candidates(const host_join_view<float>&, unsigned);
template std::vector<std::uint64_t> item_candidates(const host_join_view<double>&, unsigned);
template void join_items_on_cpu(const host_join_view<float>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);
template void join_items_on_cpu(const host_join_view<double>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);

}  // namespace epsjoin::detail::hetero
