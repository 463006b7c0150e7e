#pragma once
// The rows of a multi-device join (core/multi_device_join.hpp) reaching the caller's sink: each
// device filled the rows of its own queries into a table of its own (row_subset_sink), in its
// local ids; here they are laid out in the caller's table, or streamed to it in blocks of
// complete rows, with the caller's ids.

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/engine.hpp"
#include "core/row_subset_sink.hpp"

namespace epsjoin::detail {

/// One device's rows, as the delivery reads them.
struct shard_rows {
  row_subset_sink* sink = nullptr;     ///< the rows, in the shard's local ids
  std::span<const std::uint32_t> ids;  ///< local query -> caller's id, own queries first
  std::size_t own = 0;                 ///< the shard's own queries: ids[0, own)
};

/// Once every device has counted and filled its rows: delivers them to request.sink (which
/// also gets them as pairs when some device already handed it pairs). Every caller's query must
/// be the own query of exactly one shard.
void deliver_shard_rows(join_request& request, std::span<const shard_rows> shards,
                        unsigned threads);

}  // namespace epsjoin::detail
