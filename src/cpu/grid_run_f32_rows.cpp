// cpu-grid's task loops in float, rows layout (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
template void execute_rows<float>(detail::join_request&, const join_inputs<float>&, bool,
                                   const point_block<float>&, const point_block<float>&, int,
                                   std::vector<worker_state<float>>&);
}  // namespace epsjoin::detail::cpu
