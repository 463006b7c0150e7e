// cpu-grid's task loops in double for the chebyshev norm, both layouts (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
EPSJOIN_GRID_RUN_COLUMNS(double, distance_metric::chebyshev);
EPSJOIN_GRID_RUN_ROWS(double, distance_metric::chebyshev);
}  // namespace epsjoin::detail::cpu
