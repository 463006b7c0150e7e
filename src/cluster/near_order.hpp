#pragma once
// Points renumbered so that neighbours get near ids (cluster/near_order.cpp), for what walks a
// neighbour table in an order of its own (OPTICS): in the caller's order a row's neighbours are
// anywhere in memory, and each visit of one costs cache misses on the points and per-point
// arrays; along a grid of cells they are mostly a few cache lines apart.

#include <cstdint>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"

namespace epsjoin::detail {

struct near_order {
  /// [n] new id -> the caller's id; ascending (the identity) where nothing was reordered.
  std::vector<std::uint32_t> original;
  /// The points in the new order, the caller's values and type; empty for the identity.
  dataset points;
  bool reordered() const noexcept { return points.n() > 0; }
};

/// The points sorted by their cell, row-major, in a grid of cells about `eps` wide over their
/// (up to) three widest coordinates; stable, so equal cells keep the caller's order. The
/// identity for metrics whose neighbours are not near in coordinates (cosine, haversine) and
/// for fewer than two points.
near_order order_by_cells(dataset_view points, double eps, distance_metric metric,
                          unsigned threads);

}  // namespace epsjoin::detail
