#pragma once
// What the plain C++ floors ask of the CUDA part. A CUDA build defines these in base/*.cu; a
// build without CUDA links base/cuda_absent.cpp instead, whose answers say that CUDA is absent
// (CMake picks the file: *_absent.cpp is built only without CUDA). So the C++ code asks a
// function, not the preprocessor, whether the GPU part is there.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "epsjoin/build_info.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin::detail {

/// True in a build with the CUDA part.
bool cuda_part_built() noexcept;
/// The CUDA architectures the GPU code was compiled for, comma-separated ("" without CUDA).
std::string cuda_architectures();
/// The visible CUDA devices: none without CUDA, a driver or a device.
std::vector<cuda_device> query_cuda_devices();
/// Why `device` cannot run GPU work, or "" when it can.
std::string gpu_unavailable_reason(int device);
/// Creates `res`'s GPU state (its device's context and streams) ahead of its first join.
void prepare_gpu_state(resources& res);

/// Throws invalid_argument unless `v.data` is memory of `res.device()` holding finite values
/// only (checked on the device; the message names the first bad coordinate, as for host points).
/// Without CUDA: unavailable, naming `what`.
void check_device_points(resources& res, dataset_view v, const char* what);

/// A copy of a host table in the memory of `device` (a device_csr_sink fed through the host).
device_csr upload_table(int device, const neighbor_table& table);

/// One copy of the host points `points` in the memory of each of `devices` (a multi-device
/// join's shards, whose every device joins all the points): device g uploads the g-th of G runs
/// of rows and fetches the others from the devices that uploaded them (peer copies, over NVLink
/// where the devices have it), so the points cross the host link and the host's memory once
/// instead of G times. views[g] is devices[g]'s copy (memory_space::device); `owner` keeps them.
struct device_replicas {
  std::vector<dataset_view> views;
  std::shared_ptr<void> owner;
  std::uint64_t h2d_bytes = 0;  ///< what crossed from the host: the points, once
};
device_replicas replicate_to_devices(std::span<resources* const> devices, dataset_view points);

}  // namespace epsjoin::detail
