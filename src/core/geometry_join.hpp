#pragma once
// The joins dispatch runs for an engine that lacks the geometry asked for: cosine and haversine
// through unit vectors, L1 and L-infinity through an enclosing Euclidean ball
// (core/metric_join.hpp), periodic boxes through images
// (core/periodic_join.hpp). Each hands the engine a plain join and `counted` the exact result.

#include "core/engine.hpp"

namespace epsjoin::detail {

void run_on_euclidean(const engine& e, join_request& request, result_sink& counted);
void run_periodic(const engine& e, join_request& request, result_sink& counted);

}  // namespace epsjoin::detail
