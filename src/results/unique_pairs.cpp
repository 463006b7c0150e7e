// Unique pairs in memory (unique_pairs_sink).

#include <algorithm>
#include <mutex>

#include "base/expects.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin {

void unique_pairs_sink::begin(const sink_info& info) {
  keep_all_ = !info.self_join;
  keep_self_ = info.include_self;
  pairs_.clear();
}

void unique_pairs_sink::consume(std::span<const index_pair> pairs) {
  std::vector<index_pair> kept;
  kept.reserve(keep_all_ ? pairs.size() : pairs.size() / 2 + 1);
  for (const index_pair& p : pairs) {
    if (keep_all_ || p.query < p.neighbor || (keep_self_ && p.query == p.neighbor)) {
      kept.push_back(p);
    }
  }
  std::lock_guard lock(mutex_);
  pairs_.insert(pairs_.end(), kept.begin(), kept.end());
}

void unique_pairs_sink::consume_rows(const row_segment& rows) {
  EPSJOIN_ENSURE(rows.unordered && rows.offsets.empty() && rows.space == memory_space::host,
                 error, "unique_pairs_sink: rows other than unordered pairs");
  std::lock_guard lock(mutex_);
  const std::size_t at = pairs_.size();
  pairs_.resize(at + rows.queries.size());
  for (std::size_t k = 0; k < rows.queries.size(); ++k) {
    pairs_[at + k] = {rows.queries[k], rows.neighbors[k]};
  }
}

void unique_pairs_sink::finish() { std::sort(pairs_.begin(), pairs_.end()); }

}  // namespace epsjoin
