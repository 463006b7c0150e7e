#pragma once
// The epsilon grid of EGO and the EGO sort: points ordered lexicographically by their cell
// coordinates floor((x_k - origin_k) / width_k), dimension 0 most significant, stably.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace epsjoin::detail::ego {

/// Cell geometry per (reordered) dimension.
///
/// Cells are a hair wider than eps: width_k >= eps * (1 + 2^-20), and wider still when a
/// dimension would need more than 2^30 cells. The margin makes pruning on computed cell
/// coordinates safe: the cell of x is computed as floor((x - origin) * inv_width) in float64,
/// whose error is at most about 3 * 2^-53 * 2^30 cells; two points whose coordinates are
/// within eps are (exactly) at most 1 / (1 + 2^-20) cells apart, so their computed cells
/// differ by at most 1. Hence cells two or more apart always mean a distance above eps, even
/// for data far from the origin (offset 1e6, eps 1e-3) where floor(x / eps) alone would not
/// guarantee it.
struct grid {
  std::vector<double> origin;          ///< [d] smallest coordinate of both sets
  std::vector<double> inv_width;       ///< [d] 1 / cell width
  std::vector<std::int32_t> max_cell;  ///< [d] cell of the largest coordinate

  std::size_t d() const noexcept { return origin.size(); }
  /// Cell coordinate of value x in dimension k; x must lie in [origin_k, largest coordinate].
  std::int32_t cell(double x, std::size_t k) const noexcept {
    return static_cast<std::int32_t>(std::floor((x - origin[k]) * inv_width[k]));
  }
};

/// The grid over [lo_k, hi_k] per dimension for radius eps.
grid make_grid(double eps, std::span<const double> lo, std::span<const double> hi);

/// How cell coordinates pack into one 64-bit sort key: the leading `packed` dimensions, each
/// in bit_width(max_cell) bits, most significant first. Key order is then the lexicographic
/// order of those dimensions; dimensions after them break ties.
struct key_layout {
  std::size_t packed = 0;
  unsigned bits = 0;             ///< bits used by the key
  std::vector<unsigned> shift;   ///< [packed] where each dimension's field starts
};

key_layout make_key_layout(const grid& g);

/// How to sort: radix sort of the keys then ties by the remaining dimensions, or one merge
/// sort with a comparator of key then remaining dimensions. Same result.
enum class sort_method { radix, merge };

/// The EGO order of n points of dimension d ([n x d, row-major], dimensions already
/// reordered, in the computation type): result[r] is the index of the r-th point. Stable:
/// points of identical cell coordinates keep their input order.
template <class T>
std::vector<std::uint32_t> ego_order(const T* values, std::size_t n, const grid& g,
                                     sort_method method, unsigned threads);

/// True when the cell coordinates of a (d values) come before those of b in EGO order.
template <class T>
bool ego_less(const grid& g, const T* a, const T* b) {
  for (std::size_t k = 0; k < g.d(); ++k) {
    const std::int32_t ca = g.cell(static_cast<double>(a[k]), k);
    const std::int32_t cb = g.cell(static_cast<double>(b[k]), k);
    if (ca != cb) return ca < cb;
  }
  return false;
}

}  // namespace epsjoin::detail::ego
