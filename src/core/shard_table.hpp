#pragma once
// The caller's table, laid out once by all the devices of a multi-device join
// (core/multi_device_join.hpp): each device, having counted, hands over its own rows' counts and
// waits; the last to arrive lays the table out in the caller's sink, and every device then
// writes its own rows into it where they lie, on its own threads, while the others are still
// filling. Before, each device filled a table of its own and one pass after the join copied
// them all into the caller's: twice the table in memory, and its slowest step (0.9 s of 1.45-
// 2.12 s on four H100s, 50M points at S 50, where one device took 0.85-0.97 s).

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "core/arrivals.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

class shard_table {
 public:
  /// `out` takes rows in place; the devices' own queries cover [0, n_queries) once.
  shard_table(result_sink& out, std::size_t n_queries, std::size_t devices);

  /// A device's own rows: ids[a] is the caller's id of its own query a and counts[a] its
  /// neighbours, for a in [0, ids.size()). Blocks until every device has arrived, then returns
  /// the caller's table, where row ids[a] lies at row(ids[a]). Throws stopped_elsewhere when
  /// another device abandoned the join.
  row_destination arrive_with_rows(std::span<const std::uint32_t> ids,
                                   std::span<const std::uint32_t> counts, unsigned threads);
  /// A device that delivered no rows (it had no points, or its engine delivered pairs); if it
  /// is the last to arrive, it lays the table out for the others.
  void arrive_without_rows();
  /// A device failed or was stopped: the devices waiting for it throw stopped_elsewhere.
  void abandon() noexcept;
  /// True once the table is laid out in the caller's sink (some device arrived with rows).
  bool laid_out() const;

 private:
  // By the last device to arrive, under the meeting's lock: no device returns before the table
  // is there.
  void lay_out();

  result_sink& out_;
  std::vector<std::uint32_t> counts_;  // by the caller's id, filled by each device for its own
  arrivals arrivals_;
  std::atomic<bool> any_rows_{false};
  std::atomic<bool> laid_out_{false};
  row_destination table_;
};

}  // namespace epsjoin::detail
