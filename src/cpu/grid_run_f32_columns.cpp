// cpu-grid's task loops in float, columns layout (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
template void execute_columns<float>(detail::join_request&, const join_inputs<float>&, bool,
                                      const point_block<float>&, const point_block<float>&,
                                      std::vector<worker_state<float>>&);
}  // namespace epsjoin::detail::cpu
