// Row blocks to a callback (row_block_sink).

#include "base/expects.hpp"
#include "epsjoin/sink.hpp"
#include "results/row_copy.hpp"

namespace epsjoin {

row_block_sink::row_block_sink(callback on_block, bool sort_neighbors)
    : on_block_(std::move(on_block)), sort_neighbors_(sort_neighbors), collected_(sort_neighbors) {
  EPSJOIN_EXPECTS(static_cast<bool>(on_block_), "row_block_sink: no callback");
}

void row_block_sink::begin(const sink_info& info) {
  n_queries_ = info.n_queries;
  next_query_ = 0;
  streamed_ = false;
  collected_.begin(info);
}

row_destination row_block_sink::consume_counts(const count_batch& counts) {
  if (counts.rows != row_delivery::blocks) return collected_.consume_counts(counts);
  EPSJOIN_ENSURE(counts.counts.size() == n_queries_ && !streamed_, error, "row_block_sink: ",
                 counts.counts.size(), " rows for ", n_queries_, " queries, or blocks begun twice");
  streamed_ = true;
  return {};
}

void row_block_sink::consume_rows(const row_segment& rows) {
  const std::size_t first_query = rows.first_query;
  const std::span<const std::uint64_t> offsets = rows.offsets;
  const std::span<const std::uint32_t> neighbors = rows.neighbors;
  EPSJOIN_ENSURE(streamed_ && rows.queries.empty() && rows.space == memory_space::host &&
                     first_query == next_query_ && !offsets.empty() &&
                     first_query + offsets.size() - 1 <= n_queries_ &&
                     neighbors.size() == offsets.back() - offsets.front(),
                 error, "row_block_sink: a block of rows from ", first_query, " out of order");
  next_query_ = first_query + offsets.size() - 1;
  on_block_(first_query, offsets,
            sort_neighbors_ ? detail::sorted_row_block(offsets, neighbors, sorted_) : neighbors);
}

void row_block_sink::finish() {
  if (streamed_) {
    EPSJOIN_ENSURE(next_query_ == n_queries_, error, "row_block_sink: blocks ended at query ",
                   next_query_, " of ", n_queries_);
    return;
  }
  // Collected (rows or pairs): handed over in blocks of about 2^24 ids, whole rows each.
  collected_.finish();
  neighbor_table table = collected_.release();
  const std::span<const std::uint64_t> offsets(table.offsets);
  constexpr std::uint64_t block_ids = std::uint64_t{1} << 24;
  std::size_t q = 0;
  do {
    std::size_t end = q;
    while (end < n_queries_ && (end == q || offsets[end + 1] - offsets[q] <= block_ids)) ++end;
    on_block_(q, offsets.subspan(q, end - q + 1),
              {table.neighbors.data() + offsets[q], static_cast<std::size_t>(offsets[end] - offsets[q])});
    q = end;
  } while (q < n_queries_);
}

}  // namespace epsjoin
