// cpu-grid's task loops in float, columns layout (see grid_dispatch.hpp).
#include "cpu/grid_dispatch_impl.hpp"

namespace epsjoin::detail::cpu {
EPSJOIN_GRID_RUN_COLUMNS(float, distance_metric::euclidean);
}  // namespace epsjoin::detail::cpu
