// cpu-grid's task loops in double, columns layout (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
template void execute_columns<double>(detail::join_request&, const join_inputs<double>&, bool,
                                      const point_block<double>&, const point_block<double>&,
                                      std::vector<worker_state<double>>&);
}  // namespace epsjoin::detail::cpu
