#pragma once
// Row-wise delivery for engines that only know how to emit pairs: after a counting pass has
// fixed every row's length, the pairs of a second pass go straight into their rows (a per-row
// atomic cursor), so no pair list is ever stored or sorted.

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "base/expects.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

class row_scatter_sink final : public result_sink {
 public:
  row_scatter_sink(row_destination dest, std::span<const std::uint32_t> counts)
      : dest_(dest) {
    rows_.resize(counts.size());
    for (std::size_t q = 0; q < counts.size(); ++q) {
      rows_[q] = {dest.row(q), dest.row(q) + counts[q]};
    }
  }

  /// Host bytes the bookkeeping of `queries` rows takes: what an engine charges the memory
  /// budget (memory_budget::charge_host) before it makes one.
  static std::uint64_t bytes_for(std::uint64_t queries) noexcept {
    return queries * sizeof(row_span);
  }

  void consume(std::span<const index_pair> pairs) override {
    for (const index_pair& p : pairs) {
      std::uint32_t* at = std::atomic_ref<std::uint32_t*>(rows_[p.query].cursor)
                              .fetch_add(1, std::memory_order_relaxed);
      EPSJOIN_ENSURE(at < rows_[p.query].end, error, "internal: query ", p.query,
                     " got more neighbours in the second pass than it counted in the first");
      *at = p.neighbor;
    }
  }

  /// Where query q's next neighbour goes, for an engine that writes a row itself in one run: it
  /// writes there, then reports how many with wrote(). No pair is formed and no per-pair atomic
  /// is paid. A row written this way has that one writer and receives no consume().
  std::uint32_t* row(std::uint32_t q) const { return rows_[q].cursor; }
  /// Where the distance of row(q)'s first slot goes, for a writer that writes distances too;
  /// null where the destination takes none.
  double* distance_row(std::uint32_t q) const {
    return dest_.distances == nullptr ? nullptr : dest_.distance_at(rows_[q].cursor);
  }
  /// Starts loading query q's bookkeeping: an engine asks for it two queries ahead, since
  /// queries come in the index's order and their rows in any order.
  void prefetch(std::uint32_t q) const { __builtin_prefetch(&rows_[q], 1); }
  /// Starts loading the start of query q's row, once its bookkeeping is in (one query ahead).
  void prefetch_row(std::uint32_t q) const { __builtin_prefetch(row(q), 1); }
  /// Query q's row received n more neighbours at row(q) (its single writer's call).
  void wrote(std::uint32_t q, std::uint64_t n) {
    row_span& r = rows_[q];
    r.cursor += n;
    EPSJOIN_ENSURE(r.cursor <= r.end, error, "internal: query ", q,
                   " got more neighbours in the second pass than it counted in the first");
  }

  /// Throws unless every row received exactly the neighbours it counted.
  void check_complete() const {
    for (std::size_t q = 0; q < rows_.size(); ++q) {
      EPSJOIN_ENSURE(rows_[q].cursor == rows_[q].end, error, "internal: query ", q, " got ",
                     rows_[q].end - rows_[q].cursor,
                     " fewer neighbours in the second pass than it counted in the first");
    }
  }

 private:
  // Cursor and end side by side: a row's bookkeeping is one cache line's read, not two.
  struct row_span {
    std::uint32_t *cursor, *end;
  };
  row_destination dest_;
  std::vector<row_span> rows_;
};

}  // namespace epsjoin::detail
