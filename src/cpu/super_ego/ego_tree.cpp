#include "cpu/super_ego/ego_tree.hpp"

#include <algorithm>

#include "base/parallel.hpp"

namespace epsjoin::detail::ego {

template <class T>
std::size_t split_point(const sorted_points<T>& p, const grid& g, std::size_t lo,
                        std::size_t hi) {
  auto cell = [&](std::size_t i, std::size_t k) {
    return g.cell(static_cast<double>(p.values[i * p.d + k]), k);
  };
  const std::size_t mid = lo + (hi - lo) / 2;
  std::size_t k = 0;
  while (k < p.d && cell(lo, k) == cell(hi - 1, k)) ++k;
  if (k == p.d) return mid;  // one cell: cut by count
  // Dimensions before k are constant over the range, so cells in k never decrease along it.
  const std::int32_t c = cell(mid, k);
  auto first_at_least = [&](std::size_t from, std::size_t to, std::int32_t value) {
    while (from < to) {
      const std::size_t m = from + (to - from) / 2;
      if (cell(m, k) < value) {
        from = m + 1;
      } else {
        to = m;
      }
    }
    return from;
  };
  const std::size_t start = first_at_least(lo, mid, c);        // where mid's cell starts
  const std::size_t end = first_at_least(mid + 1, hi, c + 1);  // and where it ends
  if (start == lo) return end;  // mid lies in the first cell, which is not the last: end < hi
  if (end == hi) return start;
  return mid - start <= end - mid ? start : end;
}

template <class T>
ego_tree<T> build_tree(const sorted_points<T>& p, const grid& g, std::size_t leaf,
                       unsigned threads) {
  using node = typename ego_tree<T>::node;
  ego_tree<T> t;
  t.d = p.d;
  if (p.n == 0) return t;
  // Shape first (cheap: binary searches), preorder, with an explicit stack.
  std::vector<std::uint32_t> stack{0};
  t.nodes.push_back({0, static_cast<std::uint32_t>(p.n), 0, 0});
  while (!stack.empty()) {
    const std::uint32_t v = stack.back();
    stack.pop_back();
    const std::size_t lo = t.nodes[v].begin;
    const std::size_t hi = t.nodes[v].end;
    if (hi - lo <= leaf) continue;
    const auto cut = static_cast<std::uint32_t>(split_point(p, g, lo, hi));
    const auto l = static_cast<std::uint32_t>(t.nodes.size());
    t.nodes.push_back({static_cast<std::uint32_t>(lo), cut, 0, 0});
    t.nodes.push_back({cut, static_cast<std::uint32_t>(hi), 0, 0});
    t.nodes[v].left = l;
    t.nodes[v].right = l + 1;
    stack.push_back(l + 1);
    stack.push_back(l);
  }
  // Boxes: leaves from their points in parallel, then parents from children (children come
  // after their parent, so a backward sweep sees children first).
  const std::size_t d = p.d;
  t.boxes.resize(t.nodes.size() * 2 * d);
  parallel_for(threads, t.nodes.size(), 256, [&](std::size_t v0, std::size_t v1, unsigned) {
    for (std::size_t v = v0; v < v1; ++v) {
      if (!t.is_leaf(v)) continue;
      T* lower = t.boxes.data() + v * 2 * d;
      T* upper = lower + d;
      std::copy_n(p.row(t.nodes[v].begin), d, lower);
      std::copy_n(p.row(t.nodes[v].begin), d, upper);
      for (std::size_t i = t.nodes[v].begin + 1; i < t.nodes[v].end; ++i) {
        const T* r = p.row(i);
        for (std::size_t k = 0; k < d; ++k) {
          lower[k] = std::min(lower[k], r[k]);
          upper[k] = std::max(upper[k], r[k]);
        }
      }
    }
  });
  for (std::size_t v = t.nodes.size(); v-- > 0;) {
    if (t.is_leaf(v)) continue;
    const node& n = t.nodes[v];
    T* lower = t.boxes.data() + v * 2 * d;
    T* upper = lower + d;
    const T* ll = t.lower(n.left);
    const T* lu = t.upper(n.left);
    const T* rl = t.lower(n.right);
    const T* ru = t.upper(n.right);
    for (std::size_t k = 0; k < d; ++k) {
      lower[k] = std::min(ll[k], rl[k]);
      upper[k] = std::max(lu[k], ru[k]);
    }
  }
  return t;
}

template <class T>
std::vector<std::uint32_t> work_items(const ego_tree<T>& t, std::size_t chunk) {
  std::vector<std::uint32_t> items;
  if (t.nodes.empty()) return items;
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t v = stack.back();
    stack.pop_back();
    if (t.size(v) <= chunk || t.is_leaf(v)) {
      items.push_back(v);
    } else {
      stack.push_back(t.nodes[v].right);
      stack.push_back(t.nodes[v].left);
    }
  }
  return items;
}

template std::size_t split_point<float>(const sorted_points<float>&, const grid&, std::size_t,
                                        std::size_t);
template std::size_t split_point<double>(const sorted_points<double>&, const grid&, std::size_t,
                                         std::size_t);
template ego_tree<float> build_tree<float>(const sorted_points<float>&, const grid&, std::size_t,
                                           unsigned);
template ego_tree<double> build_tree<double>(const sorted_points<double>&, const grid&,
                                             std::size_t, unsigned);
template std::vector<std::uint32_t> work_items<float>(const ego_tree<float>&, std::size_t);
template std::vector<std::uint32_t> work_items<double>(const ego_tree<double>&, std::size_t);

}  // namespace epsjoin::detail::ego
