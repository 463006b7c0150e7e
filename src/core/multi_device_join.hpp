#pragma once
// One join spread over the GPUs of one process (resources::devices()), each device a shard with
// its own copy of the index, streams and host threads, all running at once.
//
// Self-join: the points are cut into one box a device along one coordinate, balanced by a
// sample's estimated work (epsjoin/partition.hpp), and each device self-joins its box's points
// together with their halo (the points of other boxes within eps). Its rows of halo points are
// dropped: their own device delivers them whole. The self-join keeps its halving (each distance
// once on a device): the only repeated work is in the halos. A x B: the queries are dealt out
// round-robin, so every device gets a like share of every region, and each joins its share
// against all of B.
//
// A counts-only join on an engine that shares its work items (the row-join engines) is split by
// items instead: every device indexes all the points, builds the same work items, and counts one
// item in every G of the workload order (core/engine.hpp, work_share); the sink adds the counts
// up. Nothing is cut, copied or computed twice: a slab's halo is computed on two devices, which
// at 16-D is most of the points. The price is each device building the whole index.
//
// Nothing here knows a device: a shard is a `resources` object (the caller's for the first
// device, resources::peer for the others) and the engine runs on it as on one device. The unit
// tests run it with CPU engines.

#include "core/device_split.hpp"
#include "core/engine.hpp"

namespace epsjoin::detail {

/// Runs the join of `request` with `e` on one shard per device of request.res.devices(),
/// delivering to request.sink (which must take concurrent calls, as every sink does). Counts,
/// pairs and unordered pairs pass through with the caller's ids; a sink that takes rows gets
/// pairs. Adds the partition's and each device's figures to request.stats.
void run_on_devices(const engine& e, join_request& request);

}  // namespace epsjoin::detail
