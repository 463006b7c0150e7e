#pragma once
// The join with the FP16 direct formula on the row-join pipeline (gpu/row_join/row_join.cuh),
// which meta-1q (on the tensor cores) and gds-join's FP16 arithmetic (on CUDA cores) both run,
// each with its own kernel (direct_launch.cuh).

#include <string_view>

#include "gpu/row_join/row_join.cuh"
#include "tensor/fp16/direct_launch.cuh"

namespace epsjoin::detail::fp16 {

/// Joins `req` with `kernel`, launched by `launchers`; the FP16 copies are scaled on the device
/// (half_points.cuh; FP16 sums also cap the scale, direct_bound.hpp). `engine` names the engine
/// in messages.
void run_direct_join(join_request& req, row_join::row_join_params settings,
                     const direct_kernel& kernel, const direct_launchers& launchers,
                     std::string_view engine);

}  // namespace epsjoin::detail::fp16
