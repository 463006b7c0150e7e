#include "hetero/cpu_rows.hpp"

namespace epsjoin::detail::hetero {

namespace {

/// Squared distance in the GPU kernels' order (dimension by dimension, one running sum), so
/// both sides decide a pair the same way.
template <class T, int D>
inline bool within_fixed(const T* q, const T* p, T eps2) {
  T sum = 0;
  for (int k = 0; k < D; ++k) {
    const T diff = q[k] - p[k];
    sum += diff * diff;
  }
  return sum <= eps2;
}

template <class T>
inline bool within_any(const T* q, const T* p, int d, T eps2) {
  T sum = 0;
  for (int k = 0; k < d; ++k) {
    const T diff = q[k] - p[k];
    sum += diff * diff;
    // Sums only grow: once past eps^2 the rest cannot bring the pair back.
    if ((k & 7) == 7 && sum > eps2) return false;
  }
  return sum <= eps2;
}

template <class T, class Within>
void join_items(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end,
                cpu_rows& out, Within within) {
  const auto d = static_cast<std::size_t>(v.d);
  for (std::uint32_t i = first; i < end; ++i) {
    const host_item& item = v.items[i];
    const std::uint32_t r0 = v.range_offsets[item.cell], r1 = v.range_offsets[item.cell + 1];
    for (std::uint32_t pos = item.first; pos < item.first + item.count; ++pos) {
      const T* q = v.query_points.data() + pos * d;
      const std::size_t row_start = out.neighbors.size();
      for (std::uint32_t r = r0; r < r1; ++r) {
        const host_range range = v.ranges[r];
        out.candidates += range.end - range.begin;
        for (std::uint32_t j = range.begin; j < range.end; ++j) {
          if (v.self_join && j == pos) continue;
          if (within(q, v.data_points.data() + j * d)) out.neighbors.push_back(v.data_ids[j]);
        }
      }
      out.positions.push_back(pos);
      out.counts.push_back(static_cast<std::uint32_t>(out.neighbors.size() - row_start));
    }
  }
}

template <class T, int D>
void join_fixed(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end,
                cpu_rows& out) {
  const T eps2 = v.eps2;
  join_items(v, first, end, out, [eps2](const T* q, const T* p) {
    return within_fixed<T, D>(q, p, eps2);
  });
}

}  // namespace

template <class T>
std::vector<std::uint64_t> item_candidates(const host_join_view<T>& v) {
  std::vector<std::uint64_t> out(v.items.size());
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    const host_item& item = v.items[i];
    std::uint64_t per_query = 0;
    for (std::uint32_t r = v.range_offsets[item.cell]; r < v.range_offsets[item.cell + 1]; ++r) {
      per_query += v.ranges[r].end - v.ranges[r].begin;
    }
    out[i] = per_query * item.count;
  }
  return out;
}

template <class T>
void join_items_on_cpu(const host_join_view<T>& v, std::uint32_t first, std::uint32_t end,
                       cpu_rows& out) {
  // The dimensionalities hegjoin is built for (the papers' 2-8) get an unrolled distance.
  switch (v.d) {
    case 1: return join_fixed<T, 1>(v, first, end, out);
    case 2: return join_fixed<T, 2>(v, first, end, out);
    case 3: return join_fixed<T, 3>(v, first, end, out);
    case 4: return join_fixed<T, 4>(v, first, end, out);
    case 5: return join_fixed<T, 5>(v, first, end, out);
    case 6: return join_fixed<T, 6>(v, first, end, out);
    case 7: return join_fixed<T, 7>(v, first, end, out);
    case 8: return join_fixed<T, 8>(v, first, end, out);
    default: {
      const int d = v.d;
      const T eps2 = v.eps2;
      join_items(v, first, end, out,
                 [d, eps2](const T* q, const T* p) { return within_any(q, p, d, eps2); });
    }
  }
}

template std::vector<std::uint64_t> item_candidates(const host_join_view<float>&);
template std::vector<std::uint64_t> item_candidates(const host_join_view<double>&);
template void join_items_on_cpu(const host_join_view<float>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);
template void join_items_on_cpu(const host_join_view<double>&, std::uint32_t, std::uint32_t,
                                cpu_rows&);

}  // namespace epsjoin::detail::hetero
