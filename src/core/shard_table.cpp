#include "core/shard_table.hpp"

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

shard_table::shard_table(result_sink& out, std::size_t n_queries, std::size_t devices)
    : out_(out), counts_(n_queries, 0), arrivals_(devices) {}

row_destination shard_table::arrive_with_rows(std::span<const std::uint32_t> ids,
                                              std::span<const std::uint32_t> counts,
                                              unsigned threads) {
  EPSJOIN_ENSURE(ids.size() == counts.size(), error, "internal: ", counts.size(),
                 " counts for ", ids.size(), " own rows");
  // Each device's own queries are its alone: the writes need no lock.
  parallel_for(threads, ids.size(), std::size_t{1} << 16, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t a = b; a < e; ++a) counts_[ids[a]] = counts[a];
  });
  any_rows_.store(true);
  arrivals_.arrive([&] { lay_out(); }, true);
  return table_;
}

void shard_table::arrive_without_rows() {
  arrivals_.arrive([&] { lay_out(); }, false);
}

void shard_table::abandon() noexcept { arrivals_.abandon(); }

bool shard_table::laid_out() const { return laid_out_.load(); }

void shard_table::lay_out() {
  if (!any_rows_.load()) return;
  // The sink may refuse the table (the memory limit): the device laying it out rethrows that,
  // and the waiting ones stop.
  table_ = lay_out_rows(out_, counts_);
  laid_out_.store(true);
  counts_ = {};
}

}  // namespace epsjoin::detail
