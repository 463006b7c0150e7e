#pragma once
// The EGO pruning rule ("simple" EGO strategy) for two EGO-sorted ranges of points.

#include <cstddef>
#include <cstdint>

namespace epsjoin::detail::ego {

/// True when no point of range A can lie within eps of any point of range B, judged from the
/// cell coordinates of each range's first and last point only.
///
/// Why this is safe: in an EGO-sorted range every point lies lexicographically between the
/// first and the last, so in the dimensions where first and last share a cell every point
/// shares it too, and in the first dimension where they differ every point's cell lies between
/// theirs; later dimensions are unconstrained. Walking the dimensions while both ranges are
/// still constrained, a gap of two or more cells between the two ranges' cell intervals in any
/// one of them means a distance above eps (cells are at least eps wide, see grid), so the pair
/// of ranges can be skipped.
///
/// cell_a(i, k) and cell_b(j, k) give the cell coordinate in dimension k of point i of A and
/// point j of B; a_first..a_last and b_first..b_last are inclusive.
template <class CellA, class CellB>
bool ego_prunable(const CellA& cell_a, std::size_t a_first, std::size_t a_last,
                  const CellB& cell_b, std::size_t b_first, std::size_t b_last, std::size_t d) {
  for (std::size_t k = 0; k < d; ++k) {
    const std::int64_t fa = cell_a(a_first, k);
    const std::int64_t la = cell_a(a_last, k);
    const std::int64_t fb = cell_b(b_first, k);
    const std::int64_t lb = cell_b(b_last, k);
    if (fb - la >= 2 || fa - lb >= 2) return true;
    if (fa != la || fb != lb) return false;  // dimensions after k are unconstrained
  }
  return false;
}

}  // namespace epsjoin::detail::ego

namespace epsjoin::detail::ego {

/// Squared distance between two axis-aligned boxes (lower and upper corners of d values each),
/// computed in float64, or any value above `limit` once the partial sum passes it.
///
/// Pruning on it is safe when `limit` is eps^2 * (1 + 2^-20): a pair of points inside the boxes
/// is at least as far apart as the boxes, and the few roundings here (each gap, square and sum
/// in float64) move the sum by far less than that margin, so a pruned pair is more than eps
/// apart in exact arithmetic and also in the float64 distance the leaf computes. In float32 a
/// pruned pair lies at most 2^-21 relatively beyond eps, inside the float32 error band.
template <class T>
double box_distance2(const T* lower_a, const T* upper_a, const T* lower_b, const T* upper_b,
                     std::size_t d, double limit) {
  double sum = 0;
  for (std::size_t k = 0; k < d; ++k) {
    const double below = static_cast<double>(lower_b[k]) - static_cast<double>(upper_a[k]);
    const double above = static_cast<double>(lower_a[k]) - static_cast<double>(upper_b[k]);
    const double gap = below > 0 ? below : (above > 0 ? above : 0.0);
    sum += gap * gap;
    if (sum > limit) return sum;
  }
  return sum;
}

}  // namespace epsjoin::detail::ego
