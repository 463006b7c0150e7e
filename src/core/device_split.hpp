#pragma once
// How one join is divided among the devices of one process (core/multi_device_join.hpp): whether
// it is spread at all, and by work items, query runs, slabs or dealt queries. Decided once, before
// any device starts, from the sink's request, the engine and, for a self-join, a sample.

#include <optional>

#include "core/engine.hpp"
#include "epsjoin/partition.hpp"

namespace epsjoin::detail {

/// Whether dispatch should spread the plain (Euclidean, box-free) join of `request` with `e`
/// over the resources' devices: more than one device, an engine that runs on a GPU, points on
/// the host, and nothing that asks for rows on the device (self_join_on_device). With
/// resources::devices_automatic() only a counts-only self-join of at least 1M points, and
/// run_on_devices then runs it on the first device alone unless modelled_device_seconds says
/// it takes one device at least a second.
bool spreads_over_devices(const engine& e, const join_request& request);

/// The seconds one GPU is modelled to take for `work` (partition_plan::work) in `d` dimensions.
double modelled_device_seconds(double work, std::size_t d);

/// Whether run_on_devices may split the join of `request` with `e` by work items (counts only,
/// an engine that shares its items) rather than by slabs or dealt queries, as resources::split()
/// asks: `items` yes (invalid_argument where this join cannot share them), `slabs` no, `auto` for
/// a self-join that can, and run_on_devices then takes them where the sink keeps only the total
/// (each device sums its counts on the device) or else where the slabs' halo would be large.
bool shares_items_across_devices(const engine& e, const join_request& request);

/// How run_on_devices divides a join.
enum class device_division {
  one_device,  ///< `--devices auto` found it not worth spreading: the first device alone
  work_items,  ///< every device indexes all the points and counts one item in every G
  query_runs,  ///< every device joins one run of the queries (a sink writing blocks in place)
  slabs,       ///< a self-join cut into one box a device, each with its halo
  dealt,       ///< an A x B join's queries dealt out round-robin
};

struct device_split_choice {
  device_division division = device_division::dealt;
  std::optional<partition_plan> plan;  ///< slabs: the cut's plan
  double sample_seconds = 0;           ///< the cut's sample, a stage of its own
};

/// The division of `request` over `n_shards` devices, with the notes and the decision's stage
/// that say why in request.stats.
device_split_choice choose_device_split(const engine& e, join_request& request,
                                        std::size_t n_shards, unsigned threads);

}  // namespace epsjoin::detail
