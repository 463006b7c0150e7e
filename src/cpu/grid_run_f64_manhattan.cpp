// cpu-grid's task loops in double for the manhattan norm, both layouts (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
EPSJOIN_GRID_RUN_COLUMNS(double, distance_metric::manhattan);
EPSJOIN_GRID_RUN_ROWS(double, distance_metric::manhattan);
}  // namespace epsjoin::detail::cpu
