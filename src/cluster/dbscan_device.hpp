#pragma once
// DBSCAN's merge on the device (dbscan_device.cu), for the engines that can link their pairs
// there (core/device_links.hpp): one join whose counting pass gives the core flags on the device
// and whose filling pass links each pair it finds into a lock-free union-find there, writing no
// row; the labels are finished on the device and only they and the core flags come back. The
// rules, and so the labels, are those of the host merge (dbscan.cpp).

#include <cstddef>
#include <optional>

#include "epsjoin/dbscan.hpp"

namespace epsjoin::detail {

/// DBSCAN with the merge on the device, or nullopt, having run nothing, when the engine (as
/// options.engine names it or "auto" picks it) cannot link on the device. `points` is not empty.
/// @throws out_of_memory when the device lacks 17 bytes a point beside the join
std::optional<dbscan_result> dbscan_on_device(resources& res, dataset_view points, double eps,
                                              std::size_t min_samples,
                                              const dbscan_options& options);

}  // namespace epsjoin::detail
