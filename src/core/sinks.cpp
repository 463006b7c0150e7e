#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/expects.hpp"
#include "core/parallel.hpp"
#include "core/row_copy.hpp"
#include "epsjoin/sink.hpp"
#include "io/io_file.hpp"
#include "io/npy_format.hpp"

namespace epsjoin {

namespace {

// Read once: glibc opens /sys/devices/system/cpu/online on every hardware_concurrency() call
// (about 20 us on a loaded machine), twice a one-point EpsIndex query otherwise (issue 46).
unsigned hardware_threads() {
  static const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return threads;
}

}  // namespace

void result_sink::consume_counts(std::span<const std::uint32_t>, std::span<const std::uint32_t>) {
  throw error("this sink takes pairs, not counts (an engine ignored counts_only())");
}

void result_sink::consume_total(std::uint64_t) {
  throw error(
      "this sink keeps each query's count, not a total (an engine ignored total_only_below())");
}

void result_sink::consume_unordered(std::span<const index_pair>) {
  throw error("this sink takes ordered pairs (an engine ignored wants_unordered_pairs())");
}

row_destination result_sink::begin_rows(std::span<const std::uint32_t>) {
  throw error("this sink takes pairs, not rows (an engine ignored accepts_rows())");
}

void result_sink::begin_row_blocks(std::span<const std::uint32_t>) {
  throw error("this sink does not take row blocks (an engine ignored accepts_row_blocks())");
}

void result_sink::consume_row_block(std::size_t, std::span<const std::uint64_t>,
                                    std::span<const std::uint32_t>) {
  throw error("this sink does not take row blocks (an engine ignored accepts_row_blocks())");
}

void result_sink::consume_device_table(device_csr) {
  throw error("this sink does not take a device table (an engine ignored accepts_device_table())");
}

// ---- row_block_sink ---------------------------------------------------------------------

row_block_sink::row_block_sink(callback on_block, bool sort_neighbors)
    : on_block_(std::move(on_block)), sort_neighbors_(sort_neighbors), collected_(sort_neighbors) {
  EPSJOIN_EXPECTS(static_cast<bool>(on_block_), "row_block_sink: no callback");
}

void row_block_sink::begin(const sink_info& info) {
  n_queries_ = info.n_queries;
  next_query_ = 0;
  streamed_ = false;
  collected_.begin(info);
}

row_destination row_block_sink::begin_rows(std::span<const std::uint32_t> counts) {
  return collected_.begin_rows(counts);
}

void row_block_sink::begin_row_blocks(std::span<const std::uint32_t> counts) {
  EPSJOIN_ENSURE(counts.size() == n_queries_ && !streamed_, error, "row_block_sink: ",
                 counts.size(), " rows for ", n_queries_, " queries, or blocks begun twice");
  streamed_ = true;
}

void row_block_sink::consume_row_block(std::size_t first_query,
                                       std::span<const std::uint64_t> offsets,
                                       std::span<const std::uint32_t> neighbors) {
  EPSJOIN_ENSURE(streamed_ && first_query == next_query_ && !offsets.empty() &&
                     first_query + offsets.size() - 1 <= n_queries_ &&
                     neighbors.size() == offsets.back() - offsets.front(),
                 error, "row_block_sink: a block of rows from ", first_query, " out of order");
  next_query_ = first_query + offsets.size() - 1;
  on_block_(first_query, offsets,
            sort_neighbors_ ? detail::sorted_row_block(offsets, neighbors, sorted_) : neighbors);
}

void row_block_sink::finish() {
  if (streamed_) {
    EPSJOIN_ENSURE(next_query_ == n_queries_, error, "row_block_sink: blocks ended at query ",
                   next_query_, " of ", n_queries_);
    return;
  }
  // Collected (rows or pairs): handed over in blocks of about 2^24 ids, whole rows each.
  collected_.finish();
  neighbor_table table = collected_.release();
  const std::span<const std::uint64_t> offsets(table.offsets);
  constexpr std::uint64_t block_ids = std::uint64_t{1} << 24;
  std::size_t q = 0;
  do {
    std::size_t end = q;
    while (end < n_queries_ && (end == q || offsets[end + 1] - offsets[q] <= block_ids)) ++end;
    on_block_(q, offsets.subspan(q, end - q + 1),
              {table.neighbors.data() + offsets[q], static_cast<std::size_t>(offsets[end] - offsets[q])});
    q = end;
  } while (q < n_queries_);
}

// ---- csr_sink ---------------------------------------------------------------------------

void csr_sink::begin(const sink_info& info) {
  n_queries_ = info.n_queries;
  rows_delivered_ = false;
  batches_.clear();
  table_ = {};
}

row_destination csr_sink::begin_rows(std::span<const std::uint32_t> counts) {
  EPSJOIN_ENSURE(counts.size() == n_queries_ && batches_.empty() && !rows_delivered_, error,
                 "csr_sink: begin_rows with ", counts.size(), " rows for ", n_queries_,
                 " queries, or after pairs were delivered");
  rows_delivered_ = true;
  table_.offsets.resize(n_queries_ + 1);
  const std::uint64_t total = detail::lay_out_offsets(
      counts, 0, table_.offsets.data(), hardware_threads());
  table_.neighbors.resize(total);
  return {table_.neighbors.data(), table_.offsets.data()};
}

void csr_sink::consume(std::span<const index_pair> pairs) {
  EPSJOIN_ENSURE(!rows_delivered_, error, "csr_sink: pairs delivered after rows");
  std::vector<index_pair> copy(pairs.begin(), pairs.end());
  std::lock_guard lock(mutex_);
  batches_.push_back(std::move(copy));
}

void csr_sink::finish() {
  if (rows_delivered_) {
    sort_rows();
    return;
  }
  // Counting sort by query over the collected batches, in parallel: atomic per-row counts, a
  // prefix sum, then atomic per-row cursors to place each neighbour.
  const unsigned threads = hardware_threads();
  table_.offsets.assign(n_queries_ + 1, 0);
  // Work in pieces of at most 2^20 pairs, so a few huge batches (a GPU engine's) still spread
  // over every thread.
  std::vector<std::span<const index_pair>> pieces;
  for (const auto& batch : batches_) {
    for (std::size_t at = 0; at < batch.size(); at += std::size_t{1} << 20) {
      pieces.emplace_back(batch.data() + at, std::min(batch.size() - at, std::size_t{1} << 20));
    }
  }
  auto over_batches = [&](auto&& per_pair) {
    detail::parallel_for(threads, pieces.size(), 1, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t i = b; i < e; ++i) {
        for (const index_pair& p : pieces[i]) per_pair(p);
      }
    });
  };
  over_batches([&](const index_pair& p) {
    std::atomic_ref<std::uint64_t>(table_.offsets[p.query + 1]).fetch_add(1, std::memory_order_relaxed);
  });
  for (std::size_t i = 0; i < n_queries_; ++i) table_.offsets[i + 1] += table_.offsets[i];
  table_.neighbors.resize(table_.offsets.back());
  std::vector<std::uint64_t> cursor(table_.offsets.begin(), table_.offsets.end() - 1);
  over_batches([&](const index_pair& p) {
    const std::uint64_t at =
        std::atomic_ref<std::uint64_t>(cursor[p.query]).fetch_add(1, std::memory_order_relaxed);
    table_.neighbors[at] = p.neighbor;
  });
  pieces.clear();
  batches_.clear();
  batches_.shrink_to_fit();
  sort_rows();
}

void csr_sink::sort_rows() {
  if (sort_neighbors_) {
    detail::sort_rows(table_.offsets, table_.neighbors.data(),
                      hardware_threads());
  }
}

// ---- unique_pairs_sink ------------------------------------------------------------------

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

void unique_pairs_sink::consume_unordered(std::span<const index_pair> pairs) {
  std::lock_guard lock(mutex_);
  pairs_.insert(pairs_.end(), pairs.begin(), pairs.end());
}

void unique_pairs_sink::finish() { std::sort(pairs_.begin(), pairs_.end()); }

// ---- count_sink -------------------------------------------------------------------------

void count_sink::begin(const sink_info& info) {
  total_ = 0;
  counts_.assign(per_point_ ? info.n_queries : 0, 0);
}

void count_sink::consume(std::span<const index_pair> pairs) {
  total_.fetch_add(pairs.size(), std::memory_order_relaxed);
  if (!per_point_) return;
  for (const index_pair& p : pairs) {
    std::atomic_ref<std::uint64_t>(counts_[p.query]).fetch_add(1, std::memory_order_relaxed);
  }
}

void count_sink::consume_counts(std::span<const std::uint32_t> queries,
                                std::span<const std::uint32_t> counts) {
  EPSJOIN_EXPECTS(queries.size() == counts.size(), "consume_counts: ", queries.size(),
                  " query ids but ", counts.size(), " counts");
  std::uint64_t sum = 0;
  for (std::uint32_t c : counts) sum += c;
  total_.fetch_add(sum, std::memory_order_relaxed);
  if (!per_point_) return;
  // Without a lock: the blocks that threads hand over at once are mostly of other queries (a
  // lock per block would make the threads take turns), and a query met twice still adds up.
  for (std::size_t k = 0; k < queries.size(); ++k) {
    if (counts[k] == 0) continue;
    std::atomic_ref<std::uint64_t>(counts_[queries[k]])
        .fetch_add(counts[k], std::memory_order_relaxed);
  }
}

void count_sink::consume_total(std::uint64_t pairs) {
  EPSJOIN_EXPECTS(!per_point_, "consume_total: this count_sink keeps a count per point");
  total_.fetch_add(pairs, std::memory_order_relaxed);
}

void count_sink::finish() {}

// ---- callback_sink ----------------------------------------------------------------------

void callback_sink::consume(std::span<const index_pair> pairs) {
  std::lock_guard lock(mutex_);
  callback_(pairs);
}

// ---- pair_file_sink ---------------------------------------------------------------------

pair_file_sink::pair_file_sink(std::string path, pair_file_format format, bool ordered)
    : path_(std::move(path)), format_(format), ordered_(ordered) {
  if (const output_target target = check_output_path(path_);
      format_ == pair_file_format::npy && target.kind == output_kind::stream) {
    throw io_error(path_ + ": a .npy of pairs holds its pair count in its header, known only " +
                   "when the join ends, and " + target.what + " cannot go back to it: write " +
                   "it to a file, or write the pairs as csv");
  }
  file_ = std::make_unique<detail::output_file>(path_);
}

pair_file_sink::~pair_file_sink() = default;

void pair_file_sink::write_header(std::uint64_t rows) {
  if (format_ != pair_file_format::npy) return;
  const std::string header =
      detail::npy_header("<u4", rows, 2, detail::npy_fixed_header_bytes);
  if (file_->written() == 0) {
    file_->write(header.data(), header.size());
  } else {
    file_->write_at(0, header.data(), header.size());
  }
}

void pair_file_sink::begin(const sink_info& info) {
  self_join_ = info.self_join;
  keep_self_ = info.include_self;
  written_ = 0;
  // A sink used again after finish() writes its file anew.
  if (file_ == nullptr) file_ = std::make_unique<detail::output_file>(path_);
  EPSJOIN_ENSURE(file_->written() == 0, error, "pair_file_sink::begin called twice");
  write_header(0);
}

void pair_file_sink::consume(std::span<const index_pair> pairs) {
  std::lock_guard lock(mutex_);
  EPSJOIN_ENSURE(file_ != nullptr, error, "pair_file_sink used before begin()");
  scratch_.clear();
  for (const index_pair& p : pairs) {
    if (ordered_ || !self_join_ || p.query < p.neighbor || (keep_self_ && p.query == p.neighbor)) {
      scratch_.push_back(p);
    }
  }
  write_kept(scratch_);
}

void pair_file_sink::consume_unordered(std::span<const index_pair> pairs) {
  std::lock_guard lock(mutex_);
  EPSJOIN_ENSURE(file_ != nullptr && !ordered_, error,
                 "pair_file_sink: unordered pairs before begin() or for an ordered file");
  write_kept(pairs);
}

// Called under the lock.
void pair_file_sink::write_kept(std::span<const index_pair> pairs) {
  if (format_ == pair_file_format::npy) {
    file_->write(pairs.data(), sizeof(index_pair) * pairs.size());
  } else {
    text_.clear();
    char line[32];
    for (const index_pair& p : pairs) {
      const int len = std::snprintf(line, sizeof line, "%u,%u\n", p.query, p.neighbor);
      text_.append(line, static_cast<std::size_t>(len));
    }
    file_->write(text_.data(), text_.size());
  }
  written_ += pairs.size();
}

void pair_file_sink::finish() {
  if (file_ == nullptr) return;
  write_header(written_);
  std::unique_ptr<detail::output_file> file = std::move(file_);
  file->commit();
}

}  // namespace epsjoin
