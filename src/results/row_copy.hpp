#pragma once
// Moving rows laid out in one order (an engine's processing order) into a sink: either straight
// into the sink's rows (row-wise delivery) or expanded into pairs. The layout is a CSR over
// positions: position p's neighbours are layout[offsets[p] .. offsets[p + 1]), and position p is
// query ids[p]. A piece of the layout may start and end inside rows.

#include <cstdint>
#include <span>
#include <vector>

#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

struct row_layout {
  std::span<const std::uint64_t> offsets;  ///< [positions + 1]
  std::span<const std::uint32_t> ids;      ///< [positions] position -> query id
};

/// Copies layout elements [first, first + piece.size()) (given in `piece`) into their rows at
/// `dest`, on `threads` threads.
void copy_rows(const row_layout& layout, std::uint64_t first, std::span<const std::uint32_t> piece,
               const row_destination& dest, unsigned threads);

/// True when `dest` lays its rows out as the CSR `offsets` ([rows + 1]) does, with
/// `slots_before_rows` more ids before each row (dest.starts[q] == offsets[q] + slots * q), so
/// that a run of that layout is a run of the destination.
bool is_contiguous(std::span<const std::uint64_t> offsets, const row_destination& dest,
                   unsigned threads, std::uint32_t slots_before_rows = 0);

/// Copies `piece` to base + first onwards, on `threads` threads.
void copy_run(std::uint32_t* base, std::uint64_t first, std::span<const std::uint32_t> piece,
              unsigned threads);

/// Copies elements [first, first + piece.size()) of rows laid out in query order by the CSR
/// `offsets` into their rows at `dest` (one copy when `contiguous`), on `threads` threads.
void copy_query_rows(std::span<const std::uint64_t> offsets, std::uint64_t first,
                     std::span<const std::uint32_t> piece, const row_destination& dest,
                     bool contiguous, unsigned threads);

/// offsets[0] = 0 and offsets[q + 1] = offsets[q] + counts[q] + extra_per_row, on `threads`
/// threads (the writes are also the first touch of a fresh table's offsets); returns the total.
std::uint64_t lay_out_offsets(std::span<const std::uint32_t> counts, std::uint32_t extra_per_row,
                              std::uint64_t* offsets, unsigned threads);

/// Sorts each row of a CSR layout (row i: neighbors[offsets[i], offsets[i + 1])) by id, on
/// `threads` threads.
void sort_rows(std::span<const std::uint64_t> offsets, std::uint32_t* neighbors, unsigned threads);

/// A row block (`row_delivery::blocks`) with each row sorted by id, in `scratch`.
std::span<const std::uint32_t> sorted_row_block(std::span<const std::uint64_t> offsets,
                                                std::span<const std::uint32_t> neighbors,
                                                std::vector<std::uint32_t>& scratch);

/// Hands layout elements [first, first + piece.size()) to `sink` as (query, neighbour) pairs.
void emit_rows_as_pairs(const row_layout& layout, std::uint64_t first,
                        std::span<const std::uint32_t> piece, result_sink& sink, unsigned threads);

}  // namespace epsjoin::detail
