// cpu-grid's task loops in double for the manhattan and chebyshev norms, both layouts (see
// grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
#define EPSJOIN_GRID_NORM(M)                                                                   \
  template void execute_columns<double, M>(detail::join_request&, const join_inputs<double>&,  \
                                           bool, const point_block<double>&,                   \
                                           const point_block<double>&,                         \
                                           std::vector<worker_state<double>>&);                \
  template void execute_rows<double, M>(detail::join_request&, const join_inputs<double>&, bool, \
                                        const point_block<double>&, const point_block<double>&, \
                                        int, std::vector<worker_state<double>>&);
EPSJOIN_GRID_NORM(distance_metric::manhattan)
EPSJOIN_GRID_NORM(distance_metric::chebyshev)
#undef EPSJOIN_GRID_NORM
}  // namespace epsjoin::detail::cpu
