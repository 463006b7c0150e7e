#pragma once
// DBSCAN on cpu-grid's cells in one to three dimensions, without a pair join: on a grid of cells
// of side just under eps/sqrt(d) (cell_grid.hpp) every two points of a cell are neighbours, so
//  - count: a cell of at least min_samples points is all core with no distance computed (the
//    dense-cell shortcut); any other point starts from its cell's size and scans its neighbour
//    cells only until it reaches min_samples (a cell wholly within eps of it counts whole, one
//    wholly beyond is skipped, by its bounding box);
//  - merge: the core points of a cell form one set, so the union-find runs over cells, and two
//    neighbouring cells need one core pair within eps (found by a scan that stops at the first,
//    after the boxes are tried, and skipped when the cells already share a set);
//  - border: a non-core point takes its core neighbour of smallest index, scanning core points
//    in ascending id and skipping every cell whose smallest core id is no better.
// The labels are those of the two joins exactly (same rules, exact distances).

#include <cstddef>
#include <functional>
#include <optional>

#include "epsjoin/dbscan.hpp"
#include "epsjoin/resources.hpp"

namespace epsjoin::detail {

/// The clustering, or nullopt where the cells do not suit the points (see build_cell_grid),
/// with engine "cpu-grid", merge "cells" and pairs 0 (the counts stop at min_samples). Host
/// memory is checked against `res`'s limit before each allocation that grows with N.
std::optional<dbscan_result> dbscan_on_cells(resources& res, dataset_view points, double eps,
                                             std::size_t min_samples,
                                             const std::function<void(double)>& progress);

}  // namespace epsjoin::detail
