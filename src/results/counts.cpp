// Counts: the total, and each query's when asked (count_sink).

#include <atomic>

#include "base/expects.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin {

void count_sink::begin(const sink_info& info) {
  total_ = 0;
  counts_.assign(per_point_ ? info.n_queries : 0, 0);
}

void count_sink::consume(std::span<const index_pair> pairs) {
  total_.fetch_add(pairs.size(), std::memory_order_relaxed);
  if (!per_point_) return;
  for (const index_pair& p : pairs) {
    std::atomic_ref<std::uint64_t>(counts_[p.query]).fetch_add(1, std::memory_order_relaxed);
  }
}

row_destination count_sink::consume_counts(const count_batch& batch) {
  const std::span<const std::uint32_t> queries = batch.queries;
  const std::span<const std::uint32_t> counts = batch.counts;
  EPSJOIN_EXPECTS(batch.rows == row_delivery::none && queries.size() == counts.size(),
                  "count_sink: ", queries.size(), " query ids but ", counts.size(),
                  " counts, or rows");
  EPSJOIN_EXPECTS(batch.total == 0 || !per_point_,
                  "count_sink: a total for a count_sink that keeps a count per point");
  std::uint64_t sum = batch.total;
  for (std::uint32_t c : counts) sum += c;
  total_.fetch_add(sum, std::memory_order_relaxed);
  if (!per_point_) return {};
  // Without a lock: the blocks that threads hand over at once are mostly of other queries (a
  // lock per block would make the threads take turns), and a query met twice still adds up.
  for (std::size_t k = 0; k < queries.size(); ++k) {
    if (counts[k] == 0) continue;
    std::atomic_ref<std::uint64_t>(counts_[queries[k]])
        .fetch_add(counts[k], std::memory_order_relaxed);
  }
  return {};
}

void count_sink::finish() {}

}  // namespace epsjoin
