#pragma once
// The rows of some points of a self-join, in the caller's ids: a device of a multi-device join
// (core/multi_device_join.hpp) or a rank of mpi-join self-joins its own points together with
// their halo, and only the own points' rows are wanted. Every distance is computed once, as in
// any self-join (its halving kept); the halo points' rows are dropped here.
//
// Local query ids [0, own) are the own points; `query_ids` maps local ids to the caller's
// (empty: the identity), and `data_ids` likewise the neighbours' (empty: the identity; the
// self-join's local ids are both). Counts and pairs pass straight on. Rows are filled into a
// table of this sink's own, since the engine writes every local row; the own rows then go to the
// caller's table, by lay_out_alone() or by the multi-device join once every device has counted.
// With a shard_table (a multi-device join into a sink that takes rows in place), the engine
// writes the own rows straight into the caller's table instead, and only the halo rows into a
// table here; their neighbours' local ids become the caller's afterwards (finish_in_place).
// Unordered pairs (with `unordered`, for ids that are global across shards) between an own and
// a halo point are found on both shards: the shard owning the smaller id keeps the pair.

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "base/memory_budget.hpp"
#include "core/shard_table.hpp"
#include "epsjoin/result.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

class row_subset_sink final : public result_sink {
 public:
  /// `standalone`: the sink is a join's whole sink (self_join_rows), so begin and finish go on
  /// to `out` (as an A x B join of the own points against all) and finish lays the rows out;
  /// otherwise the multi-device join does both for all its shards at once.
  struct options {
    bool unordered = false;
    bool standalone = false;
    unsigned threads = 1;  ///< for mapping counts and laying the rows out alone
    shard_table* table = nullptr;  ///< the caller's table, shared by every device, or none
  };
  row_subset_sink(result_sink& out, std::span<const std::uint32_t> query_ids, std::size_t own,
                  std::span<const std::uint32_t> data_ids, options how);

  void begin(const sink_info& info) override;
  void finish() override;
  /// `out`'s, but for the own points: where `out` keeps only the total of all its queries,
  /// the own points' total is passed on (they are local ids [0, own)); unique pairs only with
  /// `unordered`; no row blocks or device table.
  sink_request request() const override;
  void consume(std::span<const index_pair> pairs) override;
  /// Unordered pairs (with `unordered`).
  void consume_rows(const row_segment& rows) override;
  /// Counts, a total, or rows in place.
  row_destination consume_counts(const count_batch& counts) override;

  /// The budget the rows kept here are checked against (required before rows can arrive).
  void set_budget(const memory_budget& budget) { budget_ = &budget; }
  bool has_rows() const noexcept { return !rows_.offsets.empty(); }
  /// Whether pairs went on to `out` (which is then in its pairs form).
  bool handed_pairs() const noexcept { return handed_pairs_.load(); }
  std::uint32_t row_length(std::size_t a) const {
    return static_cast<std::uint32_t>(rows_.offsets[a + 1] - rows_.offsets[a]);
  }
  /// Own row a's neighbours, in the caller's ids, written from `to` on.
  void copy_row(std::size_t a, std::uint32_t* to) const;
  /// The own rows as pairs, for an `out` already in its pairs form; then frees them.
  void hand_rows_on_as_pairs();
  /// Adds what the own rows hold to pairs(), once they reached `out`; then frees them.
  void rows_delivered();
  /// Ordered pairs that went on to `out` (each unordered pair as two).
  std::uint64_t pairs() const noexcept { return pairs_.load(); }
  /// With a shard_table, once the engine returned: the own rows' neighbours get the caller's
  /// ids (unless the engine wrote those itself: `ids_written`, join_request::caller_ids), and a
  /// device whose engine laid no rows out still arrives at the table.
  void finish_in_place(bool ids_written);

 private:
  std::uint32_t query_id(std::uint32_t local) const {
    return query_ids_.empty() ? local : query_ids_[local];
  }
  std::uint32_t data_id(std::uint32_t local) const {
    return data_ids_.empty() ? local : data_ids_[local];
  }
  void hand_on(std::span<const index_pair> pairs);
  void hand_counts_on(std::span<const std::uint32_t> queries,
                      std::span<const std::uint32_t> counts);
  row_destination begin_rows(std::span<const std::uint32_t> counts);
  void lay_out_alone();
  row_destination place_in_table(std::span<const std::uint32_t> counts);

  result_sink& out_;
  std::span<const std::uint32_t> query_ids_;
  std::size_t own_;
  std::span<const std::uint32_t> data_ids_;
  options how_;
  const memory_budget* budget_ = nullptr;
  neighbor_table rows_;
  // In place (how_.table): where each local row starts (the own in the caller's table, the halo
  // in halo_rows_), and each own row's length.
  std::vector<std::uint64_t> place_starts_;
  std::vector<std::uint32_t> halo_rows_, own_counts_;
  row_destination placed_;
  bool arrived_ = false;
  std::atomic<std::uint64_t> pairs_{0};
  std::atomic<bool> handed_pairs_{false};
};

}  // namespace epsjoin::detail
