// cpu-grid's task loops in double, rows layout (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
EPSJOIN_GRID_RUN_ROWS(double, distance_metric::euclidean);
}  // namespace epsjoin::detail::cpu
