#pragma once
// A device of a multi-device self-join writes the caller's ids into the caller's table itself
// (join_request::caller_ids): each indexed position's caller id, composed on the device once,
// is what the kernels write as a neighbour. Mapped on the host after the join instead, every id
// of the device's rows is looked up at random in a table of its points: 0.83-0.87 s of a
// 2.1-2.3 s join on two H200s (uniform 2-D 50M points at S 50), where one device took 0.62 s.

#include <cstdint>
#include <span>

#include "base/gpu_state.cuh"
#include "base/memory.cuh"

namespace epsjoin::detail::row_join {

/// [n]: caller_ids[permutation[p]] for every position p < n, stream-ordered on `stream`
/// (permutation, device memory: position -> the point's index; caller_ids, host memory, one
/// for each of the points).
device_buffer<std::uint32_t> compose_caller_ids(gpu_state& gpu, cudaStream_t stream,
                                                const std::uint32_t* permutation, std::uint32_t n,
                                                std::span<const std::uint32_t> caller_ids);

}  // namespace epsjoin::detail::row_join
