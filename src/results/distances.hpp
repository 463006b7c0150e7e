#pragma once
// A table's distances where its engine did not write them with the rows (`sink_request::
// distances`), and rows sorted by id with their distances.

#include <cstdint>
#include <span>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail {

/// out[k] = the distance from query q to neighbors[k], for every k of row q (offsets in whole-
/// table positions), computed as `reported_distance` says, on `threads` threads.
void table_distances(dataset_view queries, dataset_view data,
                     std::span<const std::uint64_t> offsets, const std::uint32_t* neighbors,
                     double* out, unsigned threads);

/// Each row's neighbours in increasing id, each distance moved with its neighbour.
void sort_rows_with_distances(std::span<const std::uint64_t> offsets, std::uint32_t* neighbors,
                              double* distances, unsigned threads);

}  // namespace epsjoin::detail
