#pragma once
// The engine side of the result protocol (include/epsjoin/sink.hpp): each way an engine hands a
// result over, as one call on the sink. Engines and the layers between them and the caller's
// sink (dispatch's wrappers, shards) call these rather than build the batches themselves.

#include <cstdint>
#include <span>
#include <vector>

#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

/// Every query's count, once, for rows the engine then writes in place; where they go. With
/// `distances`, the engine writes each neighbour's distance too, where the sink wants them
/// (`row_destination::distances` is then set).
inline row_destination lay_out_rows(result_sink& sink, std::span<const std::uint32_t> counts,
                                    bool distances = false) {
  return sink.consume_counts(
      {.counts = counts, .rows = row_delivery::in_place, .distances = distances});
}

/// Every query's count, once, for blocks of complete rows in query order (`hand_row_block`).
inline void begin_row_blocks(result_sink& sink, std::span<const std::uint32_t> counts) {
  sink.consume_counts({.counts = counts, .rows = row_delivery::blocks});
}

/// Rows first_query .. first_query + offsets.size() - 2 of a table in query order.
inline void hand_row_block(result_sink& sink, std::size_t first_query,
                           std::span<const std::uint64_t> offsets,
                           std::span<const std::uint32_t> neighbors) {
  sink.consume_rows({.first_query = first_query, .offsets = offsets, .neighbors = neighbors});
}

/// The whole table, in device memory; `table.owner` keeps it for the sink.
inline void hand_device_table(result_sink& sink, const device_csr& table) {
  sink.consume_rows({.offsets = {table.offsets, table.n_queries + 1},
                     .neighbors = {table.neighbors, table.n_pairs},
                     .space = memory_space::device,
                     .device = table.device,
                     .owner = table.owner});
}

/// counts[k] more neighbours for queries[k].
inline void hand_counts(result_sink& sink, std::span<const std::uint32_t> queries,
                        std::span<const std::uint32_t> counts) {
  sink.consume_counts({.queries = queries, .counts = counts});
}

/// `pairs` more ordered pairs of the queries below the sink's `total_below`.
inline void hand_total(result_sink& sink, std::uint64_t pairs) {
  sink.consume_counts({.total = pairs});
}

/// Unordered pairs (i < j, each standing for both orientations) of a self-join, as one-neighbour
/// rows; `queries` and `neighbors` are the caller's scratch, kept between batches.
inline void hand_unordered(result_sink& sink, std::span<const index_pair> pairs,
                           std::vector<std::uint32_t>& queries,
                           std::vector<std::uint32_t>& neighbors) {
  queries.resize(pairs.size());
  neighbors.resize(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    queries[k] = pairs[k].query;
    neighbors[k] = pairs[k].neighbor;
  }
  sink.consume_rows({.queries = queries, .neighbors = neighbors, .unordered = true});
}

/// The same, with scratch of its own.
inline void hand_unordered(result_sink& sink, std::span<const index_pair> pairs) {
  std::vector<std::uint32_t> queries, neighbors;
  hand_unordered(sink, pairs, queries, neighbors);
}

/// The pairs of an unordered-pairs segment, rebuilt (for a sink that keeps index_pair).
inline void unordered_pairs_of(const row_segment& rows, std::vector<index_pair>& out) {
  out.resize(rows.queries.size());
  for (std::size_t k = 0; k < rows.queries.size(); ++k) {
    out[k] = {rows.queries[k], rows.neighbors[k]};
  }
}

}  // namespace epsjoin::detail
