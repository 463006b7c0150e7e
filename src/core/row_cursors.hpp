#pragma once
// Rows of a CSR table written in place by an engine that finds each pair once and writes both of
// its rows (a halved self-join: cpu-grid, super-ego). After a count pass has laid the rows out,
// every row has a cursor; a writer claims slots from it, in one run for a query's own hits and
// one slot at a time for the other side of each pair. Cursors are kept by the engine's index
// position, not by query id: a task's candidates lie together there, not in the table.

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

class row_cursors {
 public:
  /// Row of position p starts at dest.row(ids[p]); claims are atomic when `concurrent`.
  row_cursors(const row_destination& dest, std::span<const std::uint32_t> ids, bool concurrent,
              unsigned threads);
  /// Host bytes the cursors of `positions` rows take: what an engine charges the memory budget
  /// (memory_budget::charge_host) before it makes them.
  static std::uint64_t bytes_for(std::uint64_t positions) noexcept {
    return positions * sizeof(std::uint32_t*);
  }

  /// n slots of position p's row; where the first one is.
  std::uint32_t* claim(std::uint32_t position, std::uint64_t n) const {
    if (!concurrent_) {
      std::uint32_t* at = next_[position];
      next_[position] = at + n;
      return at;
    }
    return std::atomic_ref<std::uint32_t*>(next_[position])
        .fetch_add(static_cast<std::ptrdiff_t>(n), std::memory_order_relaxed);
  }
  /// Starts loading the next slot of position p's row (a hint: other threads may move it).
  void prefetch(std::uint32_t position) const {
    __builtin_prefetch(
        std::atomic_ref<std::uint32_t*>(next_[position]).load(std::memory_order_relaxed), 1);
  }
  /// Throws unless every row received exactly counts[p] (by position) neighbours.
  void check_complete(std::span<const std::uint32_t> counts) const;

 private:
  // Pointers, not positions in one array: a destination may keep rows in two (row_destination).
  row_destination dest_;
  std::span<const std::uint32_t> ids_;
  bool concurrent_;
  unsigned threads_;
  // Mutable through const claims: the cursors are the only state writers share.
  mutable std::vector<std::uint32_t*> next_;
};

}  // namespace epsjoin::detail
