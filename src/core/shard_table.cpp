#include "core/shard_table.hpp"

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

shard_table::shard_table(result_sink& out, std::size_t n_queries, std::size_t devices)
    : out_(out), counts_(n_queries, 0), waiting_for_(devices) {}

row_destination shard_table::arrive_with_rows(std::span<const std::uint32_t> ids,
                                              std::span<const std::uint32_t> counts,
                                              unsigned threads) {
  EPSJOIN_ENSURE(ids.size() == counts.size(), error, "internal: ", counts.size(),
                 " counts for ", ids.size(), " own rows");
  // Each device's own queries are its alone: the writes need no lock.
  parallel_for(threads, ids.size(), std::size_t{1} << 16, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t a = b; a < e; ++a) counts_[ids[a]] = counts[a];
  });
  std::unique_lock lock(mutex_);
  any_rows_ = true;
  if (lay_out_if_last(lock) && layout_failure_) std::rethrow_exception(layout_failure_);
  all_arrived_.wait(lock, [&] { return abandoned_ || waiting_for_ == 0; });
  if (abandoned_) throw stopped_elsewhere{};
  return table_;
}

void shard_table::arrive_without_rows() {
  std::unique_lock lock(mutex_);
  if (lay_out_if_last(lock) && layout_failure_) std::rethrow_exception(layout_failure_);
}

void shard_table::abandon() noexcept {
  {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
  }
  all_arrived_.notify_all();
}

bool shard_table::laid_out() const {
  std::lock_guard lock(mutex_);
  return laid_out_;
}

bool shard_table::lay_out_if_last(std::unique_lock<std::mutex>& lock) {
  EPSJOIN_ENSURE(waiting_for_ > 0, error, "internal: more devices arrived than the join has");
  if (--waiting_for_ > 0 || abandoned_ || !any_rows_) return false;
  // The sink may refuse the table (the memory limit): the device laying it out rethrows that,
  // and the waiting ones stop. Under the lock, so no device returns before the table is there.
  try {
    table_ = lay_out_rows(out_, counts_);
    laid_out_ = true;
  } catch (...) {
    layout_failure_ = std::current_exception();
    abandoned_ = true;
  }
  counts_ = {};
  lock.unlock();
  all_arrived_.notify_all();
  lock.lock();
  return true;
}

}  // namespace epsjoin::detail
