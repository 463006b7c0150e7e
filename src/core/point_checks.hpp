#pragma once
// What every entry point checks of the points it is given and adds to a self-join's result,
// shared by dispatch and the eps_index's queries so that both refuse and deliver alike.

#include <cstddef>

#include "epsjoin/dataset.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

/// At most 2^32 - 1 points (ids are 32-bit); when any: d >= 1, a data pointer, and (host points,
/// checked on `threads` threads) every coordinate finite, else invalid_argument naming `what` and
/// the first bad coordinate. Device points are the caller's to check (base/cuda_part.hpp).
void check_points_shape(dataset_view v, const char* what);
void check_host_points_finite(dataset_view v, const char* what, unsigned threads);

/// The self pairs (i, i), i < n, of a self-join that asked for them: as counts of 1 to a
/// counts-only sink, as pairs otherwise.
void emit_self_pairs(result_sink& sink, std::size_t n);

}  // namespace epsjoin::detail
