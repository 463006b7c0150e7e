#pragma once
// The grid plan of points in device memory: their column statistics computed where they lie, so
// planning a join of device points reads nothing of them on the host.

#include "base/gpu_state.cuh"
#include "epsjoin/dataset.hpp"
#include "grid/plan.hpp"

namespace epsjoin::detail::grid {

/// min, max and variance of every column of a device view (`data.on_device()`), on `stream`.
column_stats device_column_stats(gpu_state& gpu, cudaStream_t stream, dataset_view data);

/// plan_grid(data, options, threads) for host points; for device points, the same plan from
/// their statistics computed on the device.
grid_plan plan_grid_for(gpu_state& gpu, cudaStream_t stream, dataset_view data,
                        const plan_options& options, unsigned threads);

}  // namespace epsjoin::detail::grid
