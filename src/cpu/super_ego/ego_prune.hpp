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
