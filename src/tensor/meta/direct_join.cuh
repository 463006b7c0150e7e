#pragma once
// The join with the FP16 direct formula on the row-join pipeline (lbjoin/driver.cuh): meta-1q on
// the tensor cores, and gds-join's FP16 arithmetic on CUDA cores (gds_engine.cu calls it).

#include <string_view>

#include "gpu/lbjoin/driver.cuh"
#include "tensor/meta/direct_launch.cuh"

namespace epsjoin::detail::meta {

/// Scales the data (half_bound.hpp; FP16 sums also cap the scale, direct_bound.hpp), then joins
/// `req` with `kernel`. `engine` names the engine in messages; `summary` is prepended to the
/// settings' summary.
void run_direct_join(join_request& req, lbjoin::row_join_settings settings,
                     const direct_kernel& kernel, std::string_view engine);

}  // namespace epsjoin::detail::meta
