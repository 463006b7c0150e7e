#pragma once
// GPU-side resources owned by epsjoin::resources: created on first use by a GPU engine and kept
// for later joins, so streams, device buffers and pinned staging memory are allocated once.

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "base/memory.cuh"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin::detail {

inline constexpr int n_streams = 3;

/// One stream's slot in the batch pipeline: its result buffer on the device, its counter of
/// pairs written, and the pinned staging buffer its results are copied into.
struct stream_slot {
  cuda_stream stream;
  device_buffer<index_pair> device_pairs;
  device_buffer<unsigned long long> device_count;
  pinned_buffer<index_pair> staging;
  pinned_buffer<unsigned long long> staging_count;
  cuda_event kernel_start, kernel_end;  // around the slot's current kernel
};

}  // namespace epsjoin::detail

namespace epsjoin::detail {

struct gpu_state {
  int device = 0;
  cudaDeviceProp properties{};
  std::array<std::unique_ptr<stream_slot>, n_streams> slots;
  /// Temporary storage of CUB algorithms (grow-only).
  device_buffer<unsigned char> scratch;
  /// The pinned ring that row segments are copied out through (grow-only, see batch/rows.cuh).
  std::array<pinned_buffer<std::uint32_t>, 3> row_chunks;
  /// lbjoin's recorded hits (grow-only; sized by the result bound and free memory).
  device_buffer<index_pair> records;
  /// The per-point arrays of a caller above the joins (DBSCAN's union-find and labels): kept
  /// for the next call while small, so a repeated small call allocates nothing.
  device_buffer<unsigned char> point_arrays;
  /// The pinned pair that large host-to-device copies go through (base/upload.cuh).
  std::array<pinned_buffer<unsigned char>, 2> upload_chunks;
  /// Host threads the resources allow (set by acquire_gpu), for filling upload_chunks.
  unsigned host_threads = 1;
};

/// Why GPU engines cannot run here (no device, device too old), or empty when they can.
std::string gpu_unavailable_reason(int device);

/// The same for an engine that needs `feature`, present from compute capability min_major.0 on.
std::string gpu_unavailable_reason(int device, int min_major, std::string_view feature);

/// The GPU state of `res`, created on first use; makes `res.device()` current on this thread.
/// Throws unavailable when there is no usable device.
gpu_state& acquire_gpu(resources& res);

}  // namespace epsjoin::detail
