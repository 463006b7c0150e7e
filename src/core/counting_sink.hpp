#pragma once
// Dispatch's wrapper around the caller's sink: counts what the engine delivers, puts self pairs
// into delivered rows, and bounds results kept in memory by the memory budget.

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "base/expects.hpp"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/scratch_pool.hpp"
#include "core/self_slots.hpp"
#include "epsjoin/result.hpp"
#include "epsjoin/sink.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

// Counts what the engine delivers, so the stats never rely on the engine's own bookkeeping.
// Under row-wise delivery it also puts the self pairs in: each row gets one more slot, the
// point's own id goes first, and the engine writes its neighbours after it.
class counting_sink final : public result_sink, public self_slot_sink {
 public:
  explicit counting_sink(result_sink& inner) : inner_(inner) {}
  /// Rows bound for a sink that keeps them in memory are checked against this budget first, and
  /// held in it for the rest of the join; self pairs are put in on `threads` threads.
  void set_budget(memory_budget* budget, unsigned threads) {
    budget_ = budget;
    threads_ = std::max(1u, threads);
  }
  void begin(const sink_info& info) override {
    add_self_to_rows_ = info.self_join && info.include_self;
    inner_.begin(info);
    // Pairs kept in memory cannot be sized before they arrive: they are bounded as they come,
    // against what is available when the join starts.
    const sink_request wanted = inner_.request();
    bytes_per_pair_ = wanted.bytes_kept_per_pair + wanted.bytes_added_per_pair;
    if (budget_ != nullptr && bytes_per_pair_ > 0) {
      available_ = budget_->host_available();
      pairs_allowed_ = static_cast<std::uint64_t>(static_cast<double>(available_) / bytes_per_pair_);
    }
  }
  sink_request request() const override { return inner_.request(); }
  void leave_self_slots_to_engine() override { engine_writes_self_slots_ = add_self_to_rows_; }
  row_destination consume_counts(const count_batch& batch) override {
    if (batch.rows == row_delivery::in_place) return begin_rows(batch.counts, batch.distances);
    if (batch.rows == row_delivery::blocks) {
      begin_row_blocks(batch.counts);
      return {};
    }
    std::uint64_t sum = batch.total;
    for (std::uint32_t c : batch.counts) sum += c;
    pairs_.fetch_add(sum, std::memory_order_relaxed);
    return inner_.consume_counts(batch);
  }
  void consume_rows(const row_segment& rows) override {
    if (rows.unordered) {
      // Each stands for two ordered pairs: `pairs` and the budget count ordered pairs as before.
      admit(2 * rows.size());
      inner_.consume_rows(rows);
    } else if (rows.space == memory_space::device) {
      // The whole table; the engine put the self pairs in, as for rows.
      pairs_.fetch_add(rows.neighbors.size() - (add_self_to_rows_ ? rows.size() : 0),
                       std::memory_order_relaxed);
      rows_delivered_ = true;
      device_table_delivered_ = true;
      inner_.consume_rows(rows);
    } else {
      row_block(rows.first_query, rows.offsets, rows.neighbors);
    }
  }
  /// True when the engine delivered rows (and so the self pairs are already in them).
  bool rows_delivered() const { return rows_delivered_; }
  /// True when the engine handed over the whole table in device memory.
  bool device_table_delivered() const { return device_table_delivered_; }
  void consume(std::span<const index_pair> pairs) override {
    admit(pairs.size());
    inner_.consume(pairs);
  }
  void finish() override { inner_.finish(); }
  std::uint64_t pairs() const { return pairs_.load(); }

 private:
  row_destination begin_rows(std::span<const std::uint32_t> counts, bool distances) {
    const std::uint64_t sum = sum_counts(counts);
    const sink_request wanted = inner_.request();
    if (budget_ != nullptr && wanted.keeps_result_in_memory) {
      // The table's exact size is known here, before any of it is allocated. Held: what the
      // engine keeps beside it (row cursors) must fit in what is left.
      const std::uint64_t ids = sum + (add_self_to_rows_ ? counts.size() : 0);
      const double added = wanted.bytes_added_per_pair;
      budget_->hold_host((counts.size() + 1) * sizeof(std::uint64_t) + ids * sizeof(std::uint32_t) +
                             static_cast<std::uint64_t>(static_cast<double>(ids) * added),
                         added > 0 ? "the neighbour table and the arrays made from it"
                                   : "the neighbour table");
    }
    rows_delivered_ = true;
    pairs_.fetch_add(sum, std::memory_order_relaxed);
    if (!add_self_to_rows_) return lay_out_rows(inner_, counts, distances);
    const row_destination dest = lay_out_rows(inner_, plus_one(counts), distances);
    if (dest.distances != nullptr) {
      // A point's distance to itself, in its self slot; the slots' ids are the engine's or ours.
      parallel_for(threads_, counts.size(), std::size_t{1} << 14, [&](std::size_t b, std::size_t e, unsigned) {
        for (std::size_t q = b; q < e; ++q) *dest.distance_at(dest.row(q)) = 0.0;
      });
    }
    if (engine_writes_self_slots_) return dest.shifted(1);
    // In parallel: these are the first writes to the table's pages, and faulting in gigabytes
    // of fresh memory from one thread would cost more than the join.
    parallel_for(threads_, counts.size(), std::size_t{1} << 14, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t q = b; q < e; ++q) *dest.row(q) = static_cast<std::uint32_t>(q);
    });
    return dest.shifted(1);
  }
  void begin_row_blocks(std::span<const std::uint32_t> counts) {
    const std::uint64_t sum = sum_counts(counts);
    const sink_request wanted = inner_.request();
    if (budget_ != nullptr && wanted.keeps_result_in_memory && wanted.bytes_added_per_pair > 0) {
      // The blocks pass through, but what the caller makes of them stays (result_sink::
      // bytes_added_per_pair): held, as a table would be, before any of it is written.
      const std::uint64_t ids = sum + (add_self_to_rows_ ? counts.size() : 0);
      budget_->hold_host(
          static_cast<std::uint64_t>(static_cast<double>(ids) * wanted.bytes_added_per_pair),
          "the arrays made from the rows");
    }
    pairs_.fetch_add(sum, std::memory_order_relaxed);
    rows_delivered_ = true;
    if (!add_self_to_rows_) return epsjoin::detail::begin_row_blocks(inner_, counts);
    epsjoin::detail::begin_row_blocks(inner_, plus_one(counts));
  }
  void row_block(std::size_t first_query, std::span<const std::uint64_t> offsets,
                 std::span<const std::uint32_t> neighbors) {
    if (!add_self_to_rows_) return hand_row_block(inner_, first_query, offsets, neighbors);
    // Each row gains its query in front: row i moves by first_query + i (whole-table positions).
    // Blocks may come from several devices at once: each call borrows its own scratch.
    const auto scratch = blocks_.borrow();
    std::vector<std::uint64_t>& block_offsets = scratch->offsets;
    id_vector& block_ids = scratch->ids;
    block_offsets.resize(offsets.size());
    block_ids.resize(neighbors.size() + offsets.size() - 1);
    for (std::size_t i = 0; i < offsets.size(); ++i) block_offsets[i] = offsets[i] + first_query + i;
    const std::uint64_t base = block_offsets[0];
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
      std::uint32_t* row = block_ids.data() + (block_offsets[i] - base);
      row[0] = static_cast<std::uint32_t>(first_query + i);
      std::copy(neighbors.begin() + static_cast<std::ptrdiff_t>(offsets[i] - offsets[0]),
                neighbors.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1] - offsets[0]), row + 1);
    }
    hand_row_block(inner_, first_query, block_offsets, block_ids);
  }
  result_sink& inner_;
  std::atomic<std::uint64_t> pairs_{0};
  void admit(std::uint64_t ordered_pairs) {
    const std::uint64_t total = pairs_.fetch_add(ordered_pairs, std::memory_order_relaxed) + ordered_pairs;
    if (total > pairs_allowed_) {
      // What has arrived so far is only a lower bound of the result: the message says so. A
      // sink that streams its result out holds pairs only until it can write them.
      budget_->require_host_at_least(
          static_cast<std::uint64_t>(static_cast<double>(total) * bytes_per_pair_), available_,
          inner_.request().keeps_result_in_memory ? "the result"
                                                   : "holding the pairs until they are written",
          concat("its first ", total, " pairs, when the join was stopped"));
    }
  }
  std::uint64_t sum_counts(std::span<const std::uint32_t> counts) const {
    std::atomic<std::uint64_t> all{0};
    parallel_for(threads_, counts.size(), std::size_t{1} << 18, [&](std::size_t b, std::size_t e, unsigned) {
      std::uint64_t part = 0;
      for (std::size_t q = b; q < e; ++q) part += counts[q];
      all.fetch_add(part, std::memory_order_relaxed);
    });
    return all.load();
  }
  id_vector plus_one(std::span<const std::uint32_t> counts) const {
    id_vector with_self(counts.size());
    parallel_for(threads_, counts.size(), std::size_t{1} << 18, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t q = b; q < e; ++q) with_self[q] = counts[q] + 1;
    });
    return with_self;
  }

  bool add_self_to_rows_ = false;
  bool engine_writes_self_slots_ = false;
  bool rows_delivered_ = false;
  bool device_table_delivered_ = false;
  struct block_scratch {
    std::vector<std::uint64_t> offsets;
    id_vector ids;
  };
  scratch_pool<block_scratch> blocks_;
  memory_budget* budget_ = nullptr;
  unsigned threads_ = 1;
  double bytes_per_pair_ = 0;
  std::uint64_t available_ = 0;
  std::uint64_t pairs_allowed_ = UINT64_MAX;
};

}  // namespace epsjoin::detail
