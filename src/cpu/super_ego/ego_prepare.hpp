#pragma once
// From the caller's points to EGO-sorted ones: dimensions reordered and converted to the
// computation type (prepare), then the EGO sort and a gather into sorted order (index).

#include <cstddef>
#include <vector>

#include "cpu/super_ego/sorted_points.hpp"
#include "cpu/super_ego/ego_sort.hpp"
#include "epsjoin/dataset.hpp"

namespace epsjoin::detail::ego {

template <class T>
struct prepared {
  grid geometry;           ///< over both sets, in the reordered dimensions
  sorted_points<T> a, b;   ///< queries and indexed points; b stays empty in a self-join
  /// [d] per reordered dimension, the smallest and largest converted coordinate of both sets
  std::vector<double> lower, upper;
  /// [d] per reordered dimension, the largest |converted - exact| of both sets: nonzero only
  /// for float32 from float64 input, which is centred first (see prepare_points)
  std::vector<double> rounding;
};

/// Converts both sets to T with dimensions in `order` (order[k] = original dimension placed
/// k-th) and builds the grid over both for radius `eps`. float32 from float64 input is centred
/// first (the middle of both sets' range subtracted, in float64), which keeps the rounding of
/// data far from the origin small, and the rounding is measured. The points are in input order
/// until index_points.
template <class T>
prepared<T> prepare_points(dataset_view queries, dataset_view data, bool self_join,
                           const std::vector<std::size_t>& order, double eps, unsigned threads);

/// EGO-sorts the prepared sets in place (ids record where each point came from).
template <class T>
void index_points(prepared<T>& p, sort_method method, unsigned threads);

}  // namespace epsjoin::detail::ego
