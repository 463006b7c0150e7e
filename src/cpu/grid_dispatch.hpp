#pragma once
// cpu-grid's task loop for one point layout, instantiated per dimension count (columns) or
// early-exit interval (rows), join kind, output and SIMD width. The instantiations are many, so
// they live in translation units that build in parallel (grid_run_{f64,f32}_{columns,rows}.cpp
// for euclidean); this header declares their entry points. Manhattan and chebyshev (M) are
// instantiated in float64 only, one file each (grid_run_f64_{manhattan,chebyshev}.cpp: together
// they took 5 min of one core, the build's longest file).

#include <vector>

#include "core/engine.hpp"
#include "cpu/grid_execute.hpp"

namespace epsjoin::detail::cpu {

/// Runs every task of in.schedule on workers.size() threads: the column layout (d <= 8).
template <class T, distance_metric M = distance_metric::euclidean>
void execute_columns(detail::join_request& req, const join_inputs<T>& in, bool halved,
                     const point_block<T>& queries, const point_block<T>& data,
                     std::vector<worker_state<T>>& workers);

/// The same for the row layout (any d), checking the partial sum every `early_exit` dimensions
/// (0, 8 or 16; 0 never).
template <class T, distance_metric M = distance_metric::euclidean>
void execute_rows(detail::join_request& req, const join_inputs<T>& in, bool halved,
                  const point_block<T>& queries, const point_block<T>& data, int early_exit,
                  std::vector<worker_state<T>>& workers);

}  // namespace epsjoin::detail::cpu
