// Pairs to a callback (callback_sink) and to a .npy or CSV file (pair_file_sink).

#include <cstdio>
#include <mutex>

#include "base/expects.hpp"
#include "epsjoin/sink.hpp"
#include "io/io_file.hpp"
#include "io/npy_format.hpp"
#include "io/output_target.hpp"

namespace epsjoin {

void callback_sink::consume(std::span<const index_pair> pairs) {
  std::lock_guard lock(mutex_);
  callback_(pairs);
}

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

void pair_file_sink::consume_rows(const row_segment& rows) {
  EPSJOIN_ENSURE(rows.unordered && rows.offsets.empty() && rows.space == memory_space::host,
                 error, "pair_file_sink: rows other than unordered pairs");
  std::lock_guard lock(mutex_);
  EPSJOIN_ENSURE(file_ != nullptr && !ordered_, error,
                 "pair_file_sink: unordered pairs before begin() or for an ordered file");
  scratch_.resize(rows.queries.size());
  for (std::size_t k = 0; k < rows.queries.size(); ++k) {
    scratch_[k] = {rows.queries[k], rows.neighbors[k]};
  }
  write_kept(scratch_);
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
