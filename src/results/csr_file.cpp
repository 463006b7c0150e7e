// The CSR file assembler: rows written straight into the file through a shared mapping of it,
// or row blocks in query order appended with plain writes (memory bounded by a block).

#include <algorithm>
#include <cstring>
#include <thread>

#include "base/parallel.hpp"
#include "base/scratch_pool.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/sink.hpp"
#include "io/csr_format.hpp"
#include "io/table_outputs.hpp"
#include "results/row_copy.hpp"

namespace epsjoin {

using detail::csr_header_bytes;

namespace {

// Several writers for a large block: pieces of at least 8 MiB, at most four at once.
constexpr std::size_t least_piece_bytes = std::size_t{8} << 20;
constexpr std::size_t most_writers = 4;

// A block's ids at byte `at`. A block comes from one thread (a device's ring), and one thread
// copying into the page cache took 1.5 GB/s: a large one goes out as pieces written at once,
// each at its own offset, unless the target is a stream (`in_order`).
void write_block(detail::written_output& out, bool in_order, std::uint64_t at,
                 std::span<const std::uint32_t> ids) {
  const auto* bytes = reinterpret_cast<const char*>(ids.data());
  const std::size_t pieces =
      in_order ? 1 : std::clamp<std::size_t>(ids.size_bytes() / least_piece_bytes, 1, most_writers);
  if (pieces == 1) return out.write_at(at, bytes, ids.size_bytes());
  auto write_pieces = [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t k = b; k < e; ++k) {
      const std::size_t first = ids.size_bytes() * k / pieces;
      const std::size_t end = ids.size_bytes() * (k + 1) / pieces;
      out.write_at(at + first, bytes + first, end - first);
    }
  };
  detail::parallel_for(static_cast<unsigned>(pieces), pieces, 1, write_pieces);
}

}  // namespace

csr_file_sink::csr_file_sink(std::string path, bool sort_neighbors)
    : path_(std::move(path)),
      sort_neighbors_(sort_neighbors),
      collected_(sort_neighbors),
      sorted_(std::make_unique<detail::scratch_pool<std::vector<std::uint32_t>>>()) {
  in_place_ = check_output_path(path_).kind == output_kind::stream;
}

csr_file_sink::~csr_file_sink() = default;

void csr_file_sink::begin(const sink_info& info) {
  n_queries_ = info.n_queries;
  host_limit_ = info.host_memory_limit;
  rows_ = false;
  stream_.reset();
  collected_.begin(info);
}

void csr_file_sink::consume(std::span<const index_pair> pairs) { collected_.consume(pairs); }

row_destination csr_file_sink::consume_counts(const count_batch& batch) {
  EPSJOIN_ENSURE(batch.rows != row_delivery::none && batch.queries.empty(), error,
                 "csr_file_sink: counts without rows");
  if (batch.rows == row_delivery::blocks) {
    begin_row_blocks(batch.counts);
    return {};
  }
  return begin_rows(batch.counts);
}

row_destination csr_file_sink::begin_rows(std::span<const std::uint32_t> counts) {
  EPSJOIN_ENSURE(counts.size() == n_queries_ && !rows_, error, "csr_file_sink: begin_rows with ",
                 counts.size(), " rows for ", n_queries_, " queries, or twice");
  rows_ = true;
  // A stream cannot take rows in any order: they are laid out in memory and written at finish.
  if (in_place_) {
    return collected_.consume_counts({.counts = counts, .rows = row_delivery::in_place});
  }
  std::uint64_t total = 0;
  for (const std::uint32_t c : counts) total += c;
  const std::uint64_t offsets_bytes = (n_queries_ + 1) * sizeof(std::uint64_t);
  file_ = std::make_unique<detail::mapped_output>(
      path_, csr_header_bytes + offsets_bytes + total * sizeof(std::uint32_t), host_limit_);
  char* const base = file_->data();
  const auto header = detail::csr_header(n_queries_, total);
  std::memcpy(base, header.data(), header.size());
  // The header is 24 bytes, so the offsets are 8-aligned in the page-aligned mapping.
  offsets_ = reinterpret_cast<std::uint64_t*>(base + csr_header_bytes);
  neighbors_ = reinterpret_cast<std::uint32_t*>(base + csr_header_bytes + offsets_bytes);
  detail::lay_out_offsets(counts, 0, offsets_, std::max(1u, std::thread::hardware_concurrency()));
  return {neighbors_, offsets_};
}

void csr_file_sink::begin_row_blocks(std::span<const std::uint32_t> counts) {
  EPSJOIN_ENSURE(counts.size() == n_queries_ && !rows_, error, "csr_file_sink: row blocks with ",
                 counts.size(), " rows for ", n_queries_, " queries, or twice");
  rows_ = true;
  stream_ = std::make_unique<detail::written_output>(path_);
  std::uint64_t total = 0;
  for (const std::uint32_t c : counts) total += c;
  neighbors_at_ = csr_header_bytes + (n_queries_ + 1) * sizeof(std::uint64_t);
  stream_->reserve(neighbors_at_ + total * sizeof(std::uint32_t));
  // Everything in file order, so that a stream, which cannot seek, takes it as a file does.
  const auto header = detail::csr_header(n_queries_, total);
  stream_->write_at(0, header.data(), header.size());
  // The offsets go out in pieces, computed as they are written.
  constexpr std::size_t piece = std::size_t{1} << 20;
  std::vector<std::uint64_t> offsets;
  offsets.reserve(piece);
  std::uint64_t end = 0, at = csr_header_bytes;
  offsets.push_back(0);
  for (std::size_t q = 0; q < n_queries_; ++q) {
    end += counts[q];
    offsets.push_back(end);
    if (offsets.size() == piece) {
      stream_->write_at(at, offsets.data(), offsets.size() * sizeof(std::uint64_t));
      at += offsets.size() * sizeof(std::uint64_t);
      offsets.clear();
    }
  }
  stream_->write_at(at, offsets.data(), offsets.size() * sizeof(std::uint64_t));
}

void csr_file_sink::consume_rows(const row_segment& rows) {
  const std::span<const std::uint64_t> offsets = rows.offsets;
  const std::span<const std::uint32_t> neighbors = rows.neighbors;
  EPSJOIN_ENSURE(stream_ != nullptr && !offsets.empty() && rows.queries.empty() &&
                     rows.space == memory_space::host,
                 error, "csr_file_sink: rows other than a block in query order, or before the "
                 "blocks' counts");
  const std::uint64_t at = neighbors_at_ + offsets.front() * sizeof(std::uint32_t);
  if (!sort_neighbors_) return write_block(*stream_, in_place_, at, neighbors);
  const auto sorted = sorted_->borrow();
  write_block(*stream_, in_place_, at, detail::sorted_row_block(offsets, neighbors, *sorted));
}

void csr_file_sink::finish() {
  if (stream_ != nullptr) {
    std::unique_ptr<detail::written_output> file = std::move(stream_);
    file->commit();
    return;
  }
  if (file_ == nullptr) {
    // Pairs, or rows for a stream, were collected: the table is built in memory and written as
    // write_csr writes it.
    collected_.finish();
    write_csr(path_, collected_.table());
    return;
  }
  if (sort_neighbors_) {
    detail::sort_rows({offsets_, n_queries_ + 1}, neighbors_,
                      std::max(1u, std::thread::hardware_concurrency()));
  }
  std::unique_ptr<detail::mapped_output> file = std::move(file_);
  file->commit();
}

}  // namespace epsjoin
