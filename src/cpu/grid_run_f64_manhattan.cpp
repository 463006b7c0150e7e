// cpu-grid's task loops in double for the manhattan norm, both layouts (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
template void execute_columns<double, distance_metric::manhattan>(
    detail::join_request&, const join_inputs<double>&, bool, const point_block<double>&,
    const point_block<double>&, std::vector<worker_state<double>>&);
template void execute_rows<double, distance_metric::manhattan>(
    detail::join_request&, const join_inputs<double>&, bool, const point_block<double>&,
    const point_block<double>&, int, std::vector<worker_state<double>>&);
}  // namespace epsjoin::detail::cpu
