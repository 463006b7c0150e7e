#pragma once
// Two parallel stable sorts for the EGO sort: a merge sort for any comparator (chunks sorted
// with std::stable_sort, then merged pairwise, each merge cut into pieces by merge path so every
// round keeps all threads busy) and an LSD radix sort of 64-bit keys. NEW-SUPER-EGO used Boost's
// sample_sort for this step; both here are ours and equal std::stable_sort element for element.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "base/parallel.hpp"
#include "cpu/super_ego/big_vector.hpp"

namespace epsjoin::detail::ego {

/// Index i into `left` such that the first k elements of the stable merge of `left` and
/// `right` are left[0, i) and right[0, k - i) (ties go to `left`, as std::merge does).
template <class It, class Comp>
std::size_t merge_path_split(It left, std::size_t m, It right, std::size_t n, std::size_t k,
                             Comp comp) {
  std::size_t lo = k > n ? k - n : 0;
  std::size_t hi = std::min(k, m);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::size_t j = k - mid;
    // left[mid] comes before right[j - 1] unless right[j - 1] is strictly smaller.
    if (j > 0 && !comp(right[j - 1], left[mid])) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// Stable sort of a vector on `threads` threads; the result equals std::stable_sort's.
template <class Vec, class Comp>
void parallel_stable_sort(Vec& items, Comp comp, unsigned threads,
                          std::size_t min_chunk = std::size_t{1} << 14) {
  const std::size_t n = items.size();
  if (threads <= 1 || n < 2 * min_chunk) {
    std::stable_sort(items.begin(), items.end(), comp);
    return;
  }
  const std::size_t runs = std::min<std::size_t>(threads, n / min_chunk);
  std::vector<std::size_t> bounds(runs + 1);
  for (std::size_t r = 0; r <= runs; ++r) bounds[r] = n * r / runs;
  parallel_for(threads, runs, 1, [&](std::size_t r0, std::size_t r1, unsigned) {
    for (std::size_t r = r0; r < r1; ++r) {
      std::stable_sort(items.begin() + static_cast<std::ptrdiff_t>(bounds[r]),
                       items.begin() + static_cast<std::ptrdiff_t>(bounds[r + 1]), comp);
    }
  });

  // Merge neighbouring runs until one is left, ping-ponging between two buffers.
  Vec other(n);
  Vec* src = &items;
  Vec* dst = &other;
  struct piece {
    std::size_t left, mid, right;  // merge src[left, mid) with src[mid, right)
    std::size_t out_begin, out_end;  // this piece's slice of the merged output, absolute
  };
  std::vector<piece> pieces;
  while (bounds.size() > 2) {
    pieces.clear();
    std::vector<std::size_t> next{0};
    const std::size_t per_piece = std::max<std::size_t>(min_chunk, n / (threads * 4));
    for (std::size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const std::size_t left = bounds[r];
      const std::size_t mid = bounds[r + 1];
      const std::size_t right = r + 2 < bounds.size() ? bounds[r + 2] : mid;
      for (std::size_t o = left; o < right; o += per_piece) {
        pieces.push_back({left, mid, right, o, std::min(right, o + per_piece)});
      }
      next.push_back(right);
    }
    parallel_for(threads, pieces.size(), 1, [&](std::size_t p0, std::size_t p1, unsigned) {
      for (std::size_t p = p0; p < p1; ++p) {
        const piece& c = pieces[p];
        auto l = src->begin() + static_cast<std::ptrdiff_t>(c.left);
        auto r = src->begin() + static_cast<std::ptrdiff_t>(c.mid);
        const std::size_t m = c.mid - c.left;
        const std::size_t rn = c.right - c.mid;
        const std::size_t i0 = merge_path_split(l, m, r, rn, c.out_begin - c.left, comp);
        const std::size_t i1 = merge_path_split(l, m, r, rn, c.out_end - c.left, comp);
        const std::size_t j0 = c.out_begin - c.left - i0;
        const std::size_t j1 = c.out_end - c.left - i1;
        std::merge(l + static_cast<std::ptrdiff_t>(i0), l + static_cast<std::ptrdiff_t>(i1),
                   r + static_cast<std::ptrdiff_t>(j0), r + static_cast<std::ptrdiff_t>(j1),
                   dst->begin() + static_cast<std::ptrdiff_t>(c.out_begin), comp);
      }
    });
    bounds = std::move(next);
    std::swap(src, dst);
  }
  if (src != &items) items.swap(other);
}

/// A point's EGO key (its leading cell coordinates, packed) and its index.
struct key_index {
  std::uint64_t key;
  std::uint32_t index;
};

/// Stable LSD radix sort of `items` by their low `key_bits` bits of key, on `threads` threads.
/// Each pass counts digits per block, then scatters every block in order, so equal keys keep
/// their order. Passes whose digit is the same for every item are skipped.
void radix_sort_by_key(big_vector<key_index>& items, unsigned key_bits, unsigned threads);

}  // namespace epsjoin::detail::ego
