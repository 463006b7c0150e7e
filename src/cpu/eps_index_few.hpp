#pragma once
// A handful of queries against an eps_index, answered on the calling thread by walking the grid
// (cpu/eps_index_few.cpp): a join's fixed cost (planning the queries' grid, binning them, the
// schedule, the workers) is many times what one point's neighbours cost, and a caller asking
// one point at a time (scipy's query_ball_point) pays it on every call.

#include <cstddef>

#include "cpu/eps_index_state.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

/// Query sets up to this size take the walk. The walk decides every candidate with the oracle's
/// float64 sum, which the join's SIMD kernels overtake as queries add up: measured on 100k
/// uniform points, one thread, about ten neighbours a query (bench/RESULTS.md), 16 queries
/// walked in 18 us against 40 us for 17 joined in 2-D, and about even (98 against 113 us) in 4-D.
inline constexpr std::size_t few_queries_limit = 16;

/// Whether `queries` against grid `level` of `s` take the walk: few queries, a metric decided
/// on the grid itself (euclidean), and a grid of at most four indexed dimensions (3^k cells a
/// query).
bool walks_grid(const eps_index_state& s, std::size_t level, dataset_view queries);

/// Every pair (a, b) with b within `eps` (<= the level's radius) of queries' point a, decided
/// exactly as the oracle decides (float64 sum of squares in input column order), delivered to
/// `sink` as pairs in (a, b) order. Returns the candidates examined.
std::size_t walk_grid(const eps_index_state& s, std::size_t level, dataset_view queries, double eps,
                      result_sink& sink);

}  // namespace epsjoin::detail
