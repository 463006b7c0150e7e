#pragma once
// What dispatch asks of the CUDA part for points and tables in device memory (defined in
// src/gpu/device_points.cu; a build without CUDA refuses device views before calling them).

#include "epsjoin/dataset.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin::detail {

/// Throws invalid_argument unless `v.data` is memory of `res.device()` holding finite values
/// only (checked on the device; the message names the first bad coordinate, as for host points).
void check_device_points(resources& res, dataset_view v, const char* what);

/// A device copy of a host table (for a device_csr_sink fed through the host).
device_csr upload_table(resources& res, const neighbor_table& table);

}  // namespace epsjoin::detail
