#pragma once
// Dimension reordering of SUPER-EGO (dissertation 000, sec. 4.3.2.1): dimensions along which
// few pairs of points come within eps go first, so the early-exit distance loop passes eps after
// fewer dimensions and the EGO order splits on the most selective dimensions first.

#include <cstddef>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail::ego {

enum class reorder_rule {
  selectivity,  ///< the dissertation's histogram rule (default); see dimension_selectivity
  variance,     ///< decreasing variance, as paper 002 and GDS-Join describe it
  off,          ///< the input order
};

/// Per original dimension, the estimated fraction of pairs (a in A, b in B) whose coordinates
/// in that dimension lie within eps of each other.
///
/// The dissertation says SUPER-EGO "computes a histogram of the average distance between the
/// points for each dimension" and puts first the dimensions where points are spread out, "and
/// therefore fewer points will join"; paper 002 says the order is by variance. We read the
/// histogram as one with eps-wide bins and estimate, per dimension, the 1-D join selectivity
/// from it: a point pairs with every point of its own bin and, on average, half of each
/// neighbouring bin's. That is the quantity "fewer points will join" names, and unlike variance
/// it sees skew (a dimension with two far-apart tight clusters has a large variance but joins
/// almost everything). Variance stays available as reorder=variance.
/// Both sets are sampled with a fixed stride (at most 16384 points each), so the estimate is
/// deterministic and cheap; `a` and `b` may be the same view.
std::vector<double> dimension_selectivity(dataset_view a, dataset_view b, double eps,
                                          unsigned threads);

/// Per original dimension, the variance of the union of both sets (sampled as above).
std::vector<double> dimension_variance(dataset_view a, dataset_view b, unsigned threads);

/// The order in which to visit the original dimensions: result[k] is the original dimension
/// placed k-th. Ties keep the input order.
std::vector<std::size_t> dimension_order(dataset_view a, dataset_view b, double eps,
                                         reorder_rule rule, unsigned threads);

}  // namespace epsjoin::detail::ego
