#pragma once
// OPTICS as the extension exposes it (optics_call.cpp): the library's reachability plot handed
// to numpy without a copy.

#include <cstdint>

#include "join_calls.hpp"

namespace epsjoin_python {

/// (ordering [n] uint32, reachability [n] float64, core_distances [n] float64, predecessor [n]
/// int64, stats dict: engine, pairs, stages, seconds and the call's n, d, max_eps,
/// min_samples), in the settings' metric and engine.
nb::tuple optics(points_array points, double max_eps, std::uint64_t min_samples,
                 const run_settings& settings);

/// Adds `optics` to the module.
void bind_optics(nb::module_& m);

}  // namespace epsjoin_python
