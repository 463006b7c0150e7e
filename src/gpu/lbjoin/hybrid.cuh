#pragma once
// hegjoin's part of the row-join driver: host copies of the device index for the CPU side, the
// counting phase with the GPU's batches taken from the work deque while the CPU workers take
// theirs, and the GPU's fill items (its prefix of the workload order only).

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "batch/rows.cuh"
#include "gpu/gpu_sj/neighbor_ranges.cuh"
#include "gpu/lbjoin/kernels.cuh"
#include "grid/device_index.cuh"
#include "hetero/cpu_share.hpp"

namespace epsjoin::detail::lbjoin {

/// What the CPU side reads, copied from the device (the candidate ranges come item window by
/// item window, through the fetcher count_with_cpu hands the CPU side: at 8-D the whole list
/// runs to gigabytes, of which the CPU needs a sliver).
template <class T>
struct host_index {
  // Not zeroed when sized: every element is written before it is read.
  template <class U>
  using vector = std::vector<U, default_init_allocator<U>>;
  vector<hetero::host_item> items;            ///< workload order
  vector<std::uint64_t> candidates;           ///< per item
  vector<T> query_points, data_points;        ///< data_points empty for a self-join
  vector<std::uint32_t> query_ids, data_ids;  ///< data_ids empty for a self-join
  hetero::host_join_view<T> view(int d, T eps2, bool self_join, bool halving) const;
};

/// Where the CPU side's point copies come from: the caller's rows, gathered in the index's order
/// (its permutation) with the plan's dimension order, on `threads` host threads.
struct host_sources {
  dataset_view queries, data;
  std::span<const int> dim_order;
  unsigned threads = 1;
};

/// Counts one batch of items on a stream.
using count_launcher = std::function<void(const work_item* items, std::uint32_t n, cudaStream_t)>;

/// The counting phase shared with the CPU: gathers what the CPU needs, then feeds the GPU batches
/// from `cpu`'s deque (at most one in flight per stream) until its part is done, and waits for
/// the CPU workers. `halving`: the ranges are LID-UNICOMP's (a self-join) and the CPU side halves
/// too. Returns the seconds the GPU's count kernels were busy; adds the phase's steps to `stats`.
template <class T>
double count_with_cpu(gpu_state& gpu, hetero::cpu_share<T>& cpu, host_index<T>& host,
                      const grid::device_index<T>& queries, const grid::device_index<T>& data,
                      const neighbor_ranges& ranges, const work_item* ordered,
                      std::uint32_t n_items, const join_view<T>& view, bool halving,
                      const host_sources& sources, const count_launcher& count,
                      join_stats& stats);

/// The GPU's fill items, [0, gpu_items) of the workload order, grouped by segment (workload
/// order kept within each); item_begin[k] is where segment k's start.
std::vector<work_item> gpu_fill_items(std::span<const hetero::host_item> items,
                                      std::uint32_t gpu_items,
                                      std::span<const row_segment> segments,
                                      std::vector<std::uint32_t>& item_begin);

}  // namespace epsjoin::detail::lbjoin
