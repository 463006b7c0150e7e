#pragma once
// A table streamed through several devices to a sink that takes row blocks at their place (a
// CSR file written with pwrite: sink_request::row_blocks_any_order). Each device joins one run
// of the caller's queries against all the data, so its rows are one run of the table; once every
// device has counted, each knows where its run starts and writes its blocks there itself while
// the others write theirs. No device's rows pass through another's or through a table in host
// memory: the process holds only the blocks in flight (a CSR file through four devices held the
// whole table, 14 GB at 50M points, S 50, where one device held 1.8 GB).
//
// Every device holds all the data (its index), as under the work-items split. A self-join's run
// is joined as those queries against all the points, so each query's row holds the point itself:
// the sink takes it out (its absence is an internal error), and dispatch puts self pairs back
// where the caller asked for them, as for any engine.

#include <cstdint>
#include <span>
#include <vector>

#include "base/memory_budget.hpp"
#include "core/arrivals.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

/// The caller's table, laid out once every run has counted.
class range_table {
 public:
  /// `out` takes row blocks in any order; runs [firsts[g], firsts[g + 1]) cover the queries.
  range_table(result_sink& out, std::vector<std::size_t> firsts);

  std::size_t runs() const noexcept { return firsts_.size() - 1; }
  std::size_t first_query(std::size_t run) const { return firsts_[run]; }
  std::size_t queries(std::size_t run) const { return firsts_[run + 1] - firsts_[run]; }
  result_sink& out() const noexcept { return out_; }

  /// Where a run's rows lie in the table, and how many pairs they hold.
  struct placed_run {
    std::uint64_t start = 0;  ///< the table position of the run's first neighbour
    std::uint64_t pairs = 0;
  };
  /// Run g's counts as its engine gave them, `own` more than the caller's a row (1 in a
  /// self-join: each row holds the query's own point; an internal error where one does not).
  /// Blocks until every run has arrived; the last to arrive hands the counts to `out`. Throws
  /// stopped_elsewhere when another run abandoned the join.
  placed_run arrive(std::size_t run, std::span<const std::uint32_t> engine_counts,
                    std::uint32_t own, unsigned threads);
  /// A run failed or was stopped: the runs waiting for it throw stopped_elsewhere.
  void abandon() noexcept;

 private:
  result_sink& out_;
  std::vector<std::size_t> firsts_;
  std::vector<std::uint32_t> counts_;  // by the caller's query, each run writing its own
  std::vector<std::uint64_t> run_pairs_;
  std::vector<std::uint64_t> run_starts_;
  arrivals arrivals_;
};

/// One device's sink: its run's rows, handed to the caller's sink at their place. Engines that
/// stream row blocks (the GPU engines, when the run's rows fit on the device) pass straight
/// through; rows written in place (checked against the budget first) or pairs (gpu-sj's,
/// brute-gpu's: as the gathered delivery held them) are held here and written when the engine
/// is done.
class range_rows_sink final : public result_sink {
 public:
  /// `self_join`: the caller's join is a self-join, and each row's own point is taken out.
  range_rows_sink(range_table& table, std::size_t run, std::size_t n_data, bool self_join,
                  unsigned threads);
  /// The budget rows held here are checked against (the device's join's).
  void set_budget(const memory_budget& budget) { budget_ = &budget; }

  sink_request request() const override {
    return {.form = result_form::table, .rows_in_place = true, .row_blocks = true};
  }
  void consume(std::span<const index_pair> pairs) override;
  row_destination consume_counts(const count_batch& counts) override;
  void consume_rows(const row_segment& rows) override;
  /// Once the engine returned: rows held here go out, and a run whose engine delivered nothing
  /// (no queries) still arrives.
  void finish() override;

  /// The caller's pairs of this run (self pairs out).
  std::uint64_t pairs() const noexcept { return placed_.pairs; }

 private:
  // Arrives with the engine's counts (self pairs in, for a self-join).
  void arrive_with(std::span<const std::uint32_t> engine_counts);
  // Rows [first, first + offsets.size() - 1) of the engine's table, at their place.
  void hand_on(std::size_t first, std::span<const std::uint64_t> offsets,
               std::span<const std::uint32_t> neighbors);
  void hand_on_held_rows();

  range_table& table_;
  std::size_t run_;
  std::size_t first_query_;
  bool self_join_;
  unsigned threads_;
  const memory_budget* budget_ = nullptr;
  csr_sink held_;  // rows in place or pairs, for engines that do not stream blocks
  bool holds_rows_ = false;
  bool arrived_ = false;
  range_table::placed_run placed_;
  // A block's places and ids less the own points, kept from block to block (one engine, so one
  // thread, delivers a run's blocks).
  std::vector<std::uint64_t> block_places_;
  id_vector block_ids_;
};

}  // namespace epsjoin::detail
