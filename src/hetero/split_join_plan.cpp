// split_join's planning: which items each side may take, static or dynamic, and the
// candidate prefixes both ends of the deque are measured by.

#include "hetero/split_join.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "hetero/partition.hpp"

namespace epsjoin::detail::hetero {

template <class T>
void split_join<T>::plan(std::span<const host_item> items, std::span<const std::uint64_t> candidates,
                        unsigned gpu_streams) {
  EPSJOIN_EXPECTS(gpu_streams > 0, "hegjoin needs at least one GPU stream");
  const auto n = static_cast<std::uint32_t>(items.size());
  set_prefixes(items, candidates);
  begin_plan(n, queries_prefix_.back(), false);
  view_.items = items;
  const bool dynamic = s_.strategy == partition_strategy::dynamic;
  std::uint32_t gpu_part = n;  // items the GPU may take from the front (dynamic: any)
  if (!dynamic) {
    if (s_.strategy == partition_strategy::static_candidates) {
      gpu_part = gpu_items_by_candidates(candidates, s_.gpu_fraction);
    } else {
      const std::uint64_t want =
          gpu_queries_by_count(static_cast<std::uint32_t>(queries_prefix_.back()), s_.gpu_fraction);
      gpu_part = static_cast<std::uint32_t>(
          std::lower_bound(queries_prefix_.begin(), queries_prefix_.end(), want) -
          queries_prefix_.begin());
    }
  }
  if (s_.cpu_threads == 0) {
    EPSJOIN_EXPECTS(dynamic || gpu_part == n, "a static partition gives the CPU ", n - gpu_part,
                    " work items, but cpu_threads is 0");
    gpu_part = n;
  }
  if (dynamic) {
    gpu_deque_ = std::make_unique<work_deque>(n);
  } else {
    gpu_deque_ = std::make_unique<work_deque>(gpu_part);
    cpu_deque_ = std::make_unique<work_deque>(n - gpu_part);
    cpu_offset_ = gpu_part;
  }
  const unsigned batches = std::max(s_.gpu_batches, min_gpu_batches(gpu_streams, dynamic));
  batch_candidates_ = candidates_prefix_[gpu_part] / batches;
  batch_queries_ = queries_prefix_[gpu_part] / batches;
}

template <class T>
void split_join<T>::plan_dynamic(std::uint32_t n_items, std::uint64_t n_queries,
                                std::uint64_t candidates, unsigned gpu_streams) {
  EPSJOIN_EXPECTS(s_.strategy == partition_strategy::dynamic,
                  "only dynamic partitioning plans without the items");
  EPSJOIN_EXPECTS(gpu_streams > 0, "hegjoin needs at least one GPU stream");
  candidates_prefix_.clear();
  queries_prefix_.clear();
  begin_plan(n_items, n_queries, true);
  total_queries_ = n_queries;
  total_candidates_ = candidates;
  gpu_deque_ = std::make_unique<work_deque>(n_items);
  cpu_deque_.reset();
  cpu_offset_ = 0;
  const unsigned batches = std::max(s_.gpu_batches, min_gpu_batches(gpu_streams, true));
  batch_items_ = std::max(s_.min_batch_items, (n_items + batches - 1) / batches);
}

template <class T>
void split_join<T>::begin_plan(std::uint32_t n_items, std::uint64_t n_queries,
                              bool by_item_count) {
  view_ = {};
  n_items_ = n_items;
  by_item_count_ = by_item_count;
  const double queries_per_item =
      n_items > 0 ? static_cast<double>(n_queries) / static_cast<double>(n_items) : 1.0;
  chunk_items_ = static_cast<std::uint32_t>(
      std::max(1.0, std::round(static_cast<double>(s_.cpu_chunk_queries) / queries_per_item)));
  window_.store(n_items);
  {
    std::lock_guard lock(progress_mutex_);
    gpu_last_ = gpu_before_ = {};
  }
  yielded_.store(0);
  // The per-item range slots are made in start(): under dynamic partitioning at 2-6-D the GPU
  // usually empties the deque before the workers could start, and the slots are never needed.
  item_ranges_.clear();
  item_range_count_.clear();
  clock_.restart();
}

template <class T>
void split_join<T>::set_prefixes(std::span<const host_item> items,
                                std::span<const std::uint64_t> candidates) {
  const std::size_t n = items.size();
  candidates_prefix_.assign(n + 1, 0);
  queries_prefix_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    candidates_prefix_[i + 1] = candidates_prefix_[i] + candidates[i];
    queries_prefix_[i + 1] = queries_prefix_[i] + items[i].count;
  }
}

template <class T>
void split_join<T>::workload(std::span<const host_item> items,
                            std::span<const std::uint64_t> candidates) {
  EPSJOIN_EXPECTS(by_item_count_ && items.size() == n_items_ && candidates.size() == n_items_,
                  "the workload of ", items.size(), " items follows plan_dynamic of ", n_items_);
  // Read by the workers and after wait(), never by next_gpu_batch in this mode.
  set_prefixes(items, candidates);
}

template void split_join<float>::plan(std::span<const host_item> items, std::span<const std::uint64_t> candidates,
                        unsigned gpu_streams);
template void split_join<double>::plan(std::span<const host_item> items, std::span<const std::uint64_t> candidates,
                        unsigned gpu_streams);
template void split_join<float>::plan_dynamic(std::uint32_t n_items, std::uint64_t n_queries,
                                std::uint64_t candidates, unsigned gpu_streams);
template void split_join<double>::plan_dynamic(std::uint32_t n_items, std::uint64_t n_queries,
                                std::uint64_t candidates, unsigned gpu_streams);
template void split_join<float>::begin_plan(std::uint32_t n_items, std::uint64_t n_queries,
                              bool by_item_count);
template void split_join<double>::begin_plan(std::uint32_t n_items, std::uint64_t n_queries,
                              bool by_item_count);
template void split_join<float>::set_prefixes(std::span<const host_item> items,
                                std::span<const std::uint64_t> candidates);
template void split_join<double>::set_prefixes(std::span<const host_item> items,
                                std::span<const std::uint64_t> candidates);
template void split_join<float>::workload(std::span<const host_item> items,
                            std::span<const std::uint64_t> candidates);
template void split_join<double>::workload(std::span<const host_item> items,
                            std::span<const std::uint64_t> candidates);

}  // namespace epsjoin::detail::hetero
