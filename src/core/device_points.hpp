#pragma once
// What dispatch asks of the CUDA part for points and tables in device memory (defined in
// src/gpu/device_points.cu and src/gpu/replicate.cu; a build without CUDA refuses device views
// before calling them).

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin::detail {

/// Throws invalid_argument unless `v.data` is memory of `res.device()` holding finite values
/// only (checked on the device; the message names the first bad coordinate, as for host points).
void check_device_points(resources& res, dataset_view v, const char* what);

/// A device copy of a host table (for a device_csr_sink fed through the host).
device_csr upload_table(resources& res, const neighbor_table& table);

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
