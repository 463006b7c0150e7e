#pragma once
// Moving rows laid out in one order (an engine's processing order) into a sink: either straight
// into the sink's rows (row-wise delivery) or expanded into pairs. The layout is a CSR over
// positions: position p's neighbours are layout[offsets[p] .. offsets[p + 1]), and position p is
// query ids[p]. A piece of the layout may start and end inside rows.

#include <cstdint>
#include <span>

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

/// True when `dest` lays its rows out exactly as the CSR `offsets` ([rows + 1]) does, so that a
/// run of the layout is a run of the destination.
bool is_contiguous(std::span<const std::uint64_t> offsets, const row_destination& dest,
                   unsigned threads);

/// Copies elements [first, first + piece.size()) of rows laid out in query order by the CSR
/// `offsets` into their rows at `dest` (one copy when `contiguous`), on `threads` threads.
void copy_query_rows(std::span<const std::uint64_t> offsets, std::uint64_t first,
                     std::span<const std::uint32_t> piece, const row_destination& dest,
                     bool contiguous, unsigned threads);

/// Sorts each row of a CSR layout (row i: neighbors[offsets[i], offsets[i + 1])) by id, on
/// `threads` threads.
void sort_rows(std::span<const std::uint64_t> offsets, std::uint32_t* neighbors, unsigned threads);

/// Hands layout elements [first, first + piece.size()) to `sink` as (query, neighbour) pairs.
void emit_rows_as_pairs(const row_layout& layout, std::uint64_t first,
                        std::span<const std::uint32_t> piece, result_sink& sink, unsigned threads);

}  // namespace epsjoin::detail
