#pragma once
// hegjoin's work source for the row-join pipeline: host copies of the device index for the CPU
// side, the counting phase with the GPU's batches taken from the work deque while the CPU
// workers take theirs, the GPU's fill items (its prefix of the workload order only), and the
// CPU's rows delivered beside the GPU's.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "batch/rows.cuh"
#include "gpu/row_join/row_join.cuh"
#include "grid/device_index.cuh"
#include "grid/neighbor_ranges.cuh"
#include "hetero/split_join.hpp"

namespace epsjoin::detail::hetero {

using row_join::join_view;
using row_join::work_item;

/// What the CPU side reads, copied from the device (the candidate ranges come item window by
/// item window, through the fetcher count_with_cpu hands the CPU side: at 8-D the whole list
/// runs to gigabytes, of which the CPU needs a sliver).
template <class T>
struct host_index {
  // Not zeroed when sized: every element is written before it is read.
  template <class U>
  using vector = std::vector<U, default_init_allocator<U>>;
  vector<host_item> items;            ///< workload order
  vector<std::uint64_t> candidates;           ///< per item
  vector<T> query_points, data_points;        ///< data_points empty for a self-join
  vector<std::uint32_t> query_ids, data_ids;  ///< data_ids empty for a self-join
  host_join_view<T> view(int d, T eps2, bool self_join, bool halving) const;
};

/// Where the CPU side's point copies come from: the caller's rows, gathered in the index's order
/// (its permutation) with the plan's dimension order, on `threads` host threads.
struct host_sources {
  dataset_view queries, data;
  std::span<const int> dim_order;
  unsigned threads = 1;
};

/// The row join's work source backed by `cpu`'s deque: the GPU counts the batches the deque hands
/// it while the CPU workers join the rest. `cpu` must outlive the source.
template <class T>
class deque_source final : public row_join::work_source<T> {
 public:
  explicit deque_source(split_join<T>& split) : split_(split) {}
  bool allows_queue() const override { return false; }
  /// Gathers what the CPU needs, then feeds the GPU batches from the deque (at most one in
  /// flight per stream) until its part is done, and waits for the CPU workers.
  double count(const row_join::count_context<T>& ctx) override;
  void report(join_stats& stats) const override { split_.report(stats); }
  std::uint32_t device_items(std::uint32_t /*n_items*/) const override { return split_.gpu_items(); }
  bool found_elsewhere() const override { return split_.found_any(); }
  std::vector<std::uint32_t> counts_elsewhere(std::uint32_t positions) const override {
    return split_.counts_by_position(positions);
  }
  std::vector<work_item> device_fill_items(std::span<const row_segment> segments,
                                           std::vector<std::uint32_t>& item_begin) const override;
  void deliver_elsewhere(const delivery& out, std::span<const std::uint32_t> device_counts,
                         unsigned threads) override {
    if (out.form() == delivery_form::rows) {
      split_.deliver_rows(out.destination(), device_counts, threads);
    } else {
      split_.deliver_pairs(out.sink());
    }
  }

 private:
  split_join<T>& split_;
  host_index<T> host_;
};

}  // namespace epsjoin::detail::hetero
