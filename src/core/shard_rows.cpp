#include "core/shard_rows.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/fresh_array.hpp"
#include "base/parallel.hpp"
#include "epsjoin/sink.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

namespace {

// Ids a block of rows holds at most (64 MiB), as the engines' own row blocks; a forced segment
// size (segment_ids, the tests' override) forces blocks as small.
constexpr std::uint64_t default_block_ids = std::uint64_t{1} << 24;

// The devices' rows as blocks of complete rows in query order, for a sink that streams them (a
// CSR file: plain writes, memory bounded by a block). Laid out whole instead (rows in place), a
// file is mapped and each device's copy faults its pages in: on 4 H100s, 100M points at S 50,
// that copy took 9.1 s of an 11.4 s join.
void deliver_row_blocks(join_request& request, std::span<const shard_rows> shards,
                        std::span<const std::uint32_t> counts, unsigned threads) {
  // Where each caller's row lies: the shard that owns the query (every query is one shard's
  // own) and its local row there; `none` for a shard that ran nothing (its rows are empty).
  constexpr std::uint16_t none = 0xffff;
  const std::size_t n = counts.size();
  fresh_array<std::uint16_t> owner(n);
  fresh_array<std::uint32_t> local(n);
  std::uint32_t longest = 0;
  for (std::size_t g = 0; g < shards.size(); ++g) {
    const shard_rows& s = shards[g];
    const auto mark = static_cast<std::uint16_t>(s.sink->has_rows() ? g : none);
    parallel_for(threads, s.own, std::size_t{1} << 14, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t a = b; a < e; ++a) {
        owner.data()[s.ids[a]] = mark;
        local.data()[s.ids[a]] = static_cast<std::uint32_t>(a);
      }
    });
  }
  for (std::uint32_t c : counts) longest = std::max(longest, c);
  const std::uint64_t forced = request.budget.overrides().segment_ids;
  const std::uint64_t block_ids = forced > 0 ? forced : default_block_ids;
  begin_row_blocks(request.sink, counts);
  fresh_array<std::uint32_t> neighbors(std::max<std::uint64_t>(block_ids, longest));
  std::vector<std::uint64_t> offsets;
  std::uint64_t position = 0;
  for (std::size_t first = 0; first < n;) {
    std::size_t end = first;
    offsets.assign(1, position);
    while (end < n && (end == first || offsets.back() - position + counts[end] <= block_ids)) {
      offsets.push_back(offsets.back() + counts[end]);
      ++end;
    }
    parallel_for(
        threads, end - first, std::size_t{1} << 10, [&](std::size_t b, std::size_t e, unsigned) {
          for (std::size_t r = b; r < e; ++r) {
            const std::size_t q = first + r;
            if (owner[q] == none) continue;
            shards[owner[q]].sink->copy_row(local[q], neighbors.data() + (offsets[r] - position));
          }
        });
    const std::uint64_t ids = offsets.back() - position;
    hand_row_block(request.sink, first, offsets, {neighbors.data(), ids});
    position = offsets.back();
    first = end;
  }
  for (const shard_rows& s : shards) {
    if (s.sink->has_rows()) s.sink->rows_delivered();
  }
}

}  // namespace

// Once every device has counted and filled its rows: the caller's sink lays out the whole table
// (or takes it in blocks, deliver_row_blocks) and each device's own rows go to their places, in
// the caller's ids. A sink that already took pairs from one device (an engine that delivered
// pairs) gets the rows as pairs too.
void deliver_shard_rows(join_request& request, std::span<const shard_rows> shards,
                        unsigned threads) {
  bool any_rows = false, any_pairs = false;
  for (const shard_rows& s : shards) {
    any_rows = any_rows || s.sink->has_rows();
    any_pairs = any_pairs || s.sink->handed_pairs();
  }
  if (!any_rows) return;
  if (any_pairs) {
    for (const shard_rows& s : shards) s.sink->hand_rows_on_as_pairs();
    return;
  }
  std::vector<std::uint32_t> counts(request.queries.n, 0);
  for (const shard_rows& s : shards) {
    if (!s.sink->has_rows()) continue;
    parallel_for(threads, s.own, std::size_t{1} << 14, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t a = b; a < e; ++a) counts[s.ids[a]] = s.sink->row_length(a);
    });
  }
  if (request.sink.request().row_blocks) {
    deliver_row_blocks(request, shards, counts, threads);
    return;
  }
  const row_destination dest = lay_out_rows(request.sink, counts);
  for (const shard_rows& s : shards) {
    if (!s.sink->has_rows()) continue;
    parallel_for(threads, s.own, std::size_t{1} << 12, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t a = b; a < e; ++a) {
        s.sink->copy_row(a, dest.row(s.ids[a]));
      }
    });
    s.sink->rows_delivered();
  }
}

}  // namespace epsjoin::detail
