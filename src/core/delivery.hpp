#pragma once
// The one way results leave an engine. An engine says what it has (neighbour counts, pieces of
// rows in its own layout, or pairs through per-thread emitters) and the adapter gives the sink
// the form it takes: counts only, rows written in place, or pairs. Engines never branch over
// the sink's modes themselves.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/emitter.hpp"
#include "epsjoin/sink.hpp"
#include "results/handover.hpp"
#include "results/row_copy.hpp"

namespace epsjoin::detail {

/// What the sink takes.
enum class delivery_form {
  counts,  ///< neighbour counts only: no pair is materialised anywhere
  rows,    ///< whole rows, written in place once their lengths are known
  pairs,   ///< (query, neighbour) pairs in batches
};

class delivery {
 public:
  /// `finds_each_pair_once`: the engine's self-join finds each unordered pair once (a halved
  /// pattern). A sink that wants unordered pairs then gets the pairs form with pairs_once(),
  /// before rows; every other engine gets what the sink takes as before.
  delivery(result_sink& sink, unsigned threads, bool finds_each_pair_once = false)
      : sink_(&sink),
        threads_(threads == 0 ? 1 : threads),
        wanted_(sink.request()),
        once_(!wanted_.counts_only() && finds_each_pair_once && wanted_.unordered_pairs()),
        form_(wanted_.counts_only()               ? delivery_form::counts
              : once_ || !wanted_.rows_in_place ? delivery_form::pairs
                                                : delivery_form::rows) {}

  delivery_form form() const noexcept { return form_; }
  result_sink& sink() const noexcept { return *sink_; }
  unsigned threads() const noexcept { return threads_; }

  /// counts[k] more neighbours for query ids[k] (zeros skipped), handed over on the threads.
  void counts(std::span<const std::uint32_t> ids, std::span<const std::uint32_t> counts) const;
  /// Counts form, where the sink keeps only the number of pairs: the queries it counts are
  /// those below the returned id. An engine whose counts are on a device may then sum them
  /// there and hand over the sum (`total`); std::nullopt: the counts query by query.
  std::optional<std::size_t> total_only_below() const {
    return form_ == delivery_form::counts ? wanted_.total_only_below() : std::nullopt;
  }
  /// `pairs` more pairs of the queries below total_only_below().
  void total(std::uint64_t pairs) const { hand_total(*sink_, pairs); }
  /// Rows form: the sink lays out rows of counts_by_query[q] neighbours; where row q starts.
  /// Called once, before rows(). With `distances` (only where wants_distances()), the engine
  /// writes each neighbour's distance at the destination's `distances` too.
  row_destination lay_out(std::span<const std::uint32_t> counts_by_query, bool distances = false);
  /// Rows form: the sink wants each neighbour's distance (`sink_request::distances`). An engine
  /// that has them at hand writes them with the rows; for the others the sink computes them.
  bool wants_distances() const noexcept {
    return form_ == delivery_form::rows && wanted_.distances;
  }
  /// Layout elements [first, first + piece.size()), an engine's rows in its own order: copied
  /// into the laid-out rows (rows form) or handed over as pairs (pairs form).
  void rows(const row_layout& layout, std::uint64_t first,
            std::span<const std::uint32_t> piece) const;
  /// Rows form, for an engine that lays its rows out in query order: the sink lays out rows of
  /// counts_by_query[q] neighbours, and `offsets` ([queries + 1], the prefix sums of
  /// counts_by_query) is that layout. Called once, before query_rows().
  void lay_out_query_rows(std::span<const std::uint32_t> counts_by_query,
                          std::span<const std::uint64_t> offsets);
  /// Elements [first, first + piece.size()) of the query-order layout, copied into their rows:
  /// in one run where the sink's rows lie as the layout does, row by row where they do not
  /// (a sink that adds self pairs leaves a slot before each row).
  void query_rows(std::uint64_t first, std::span<const std::uint32_t> piece) const;
  /// After lay_out_query_rows: true when the sink's rows have exactly one slot before each row
  /// and otherwise lie as the layout does (a sink adding self pairs: the slot holds the query's
  /// own id). An engine that writes that slot itself can then deliver in runs (`query_run`).
  bool one_slot_before_rows() const noexcept { return one_slot_before_rows_; }
  /// Elements [first, first + piece.size()) of the layout with one slot before each row (so
  /// row q, its slot first, starts at offsets[q] + q), copied in one run.
  void query_run(std::uint64_t first, std::span<const std::uint32_t> piece) const {
    copy_run(destination_.neighbors - 1, first, piece, threads_);
  }
  /// Before lay_out_query_rows, for an engine whose table has each row's self pair in a slot
  /// before it: asks the sink to leave those slots to the engine. True when the sink has such
  /// slots and agreed; the engine must then deliver through query_run (one_slot_before_rows)
  /// or query_rows_with_self_slots, which write the slots with the rows.
  bool take_self_slots();
  /// Elements [first, first + piece.size()) of the layout with one slot before each row, copied
  /// row by row (slot first) into a sink whose rows do not lie as the layout does.
  void query_rows_with_self_slots(std::uint64_t first, std::span<const std::uint32_t> piece);
  /// Rows form, for an engine that fills its rows in query order: true when the sink takes
  /// them as blocks of complete rows (`row_delivery::blocks`), which bounds memory.
  bool takes_row_blocks() const { return form_ == delivery_form::rows && wanted_.row_blocks; }
  void begin_row_blocks(std::span<const std::uint32_t> counts_by_query) const {
    epsjoin::detail::begin_row_blocks(*sink_, counts_by_query);
  }
  void row_block(std::size_t first_query, std::span<const std::uint64_t> offsets,
                 std::span<const std::uint32_t> neighbors) const {
    hand_row_block(*sink_, first_query, offsets, neighbors);
  }
  /// A per-thread buffer of pairs for the pairs form (flush it before it goes).
  pair_emitter emitter() const { return pair_emitter(*sink_); }
  /// Pairs form for an engine that finds each pair once, into a sink that keeps each unordered
  /// pair once: the engine emits each pair once, as (min, max), through `unordered_emitter()`,
  /// and skips the other orientation; self pairs (i, i) are never emitted that way.
  bool pairs_once() const noexcept { return once_; }
  /// A per-thread buffer of unordered pairs (i < j), for pairs_once().
  pair_emitter unordered_emitter() const {
    return pair_emitter(*sink_, std::size_t{1} << 15, pair_emitter::pair_kind::unordered);
  }
  /// The destination lay_out returned.
  const row_destination& destination() const noexcept { return destination_; }

 private:
  result_sink* sink_;
  unsigned threads_;
  sink_request wanted_;
  bool once_;
  delivery_form form_;
  row_destination destination_;
  std::span<const std::uint64_t> query_offsets_;
  std::vector<std::uint64_t> slotted_offsets_;  // query_offsets_[q] + q, made when first needed
  bool contiguous_ = false;
  bool one_slot_before_rows_ = false;
};

}  // namespace epsjoin::detail
