#pragma once
// Large host-to-device copies from pageable memory. The driver stages pageable copies through
// its own small pinned buffers on one thread (about 7 GB/s on the H100 machine: 0.29 s for
// 2^20 points in 256-D); here the resource's host threads fill one pinned chunk while the other
// is on its way to the device.

#include <cstddef>

#include "base/gpu_state.cuh"

namespace epsjoin::detail {

/// Copies `bytes` from `host` (any host memory) to `device`, stream-ordered on `stream`; returns
/// once the host memory may change again. Small copies go the driver's way.
void upload_to_device(gpu_state& gpu, void* device, const void* host, std::size_t bytes,
                      cudaStream_t stream);

}  // namespace epsjoin::detail
