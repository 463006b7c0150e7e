// The CSR file sink: rows written straight into the file through a shared mapping of it, or
// row blocks in query order appended with plain writes (memory bounded by a block).

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/parallel.hpp"
#include "core/row_copy.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/sink.hpp"
#include "io/csr_format.hpp"
#include "io/io_file.hpp"
#include "io/output_target.hpp"
#include "io/resident_bound.hpp"

namespace epsjoin {

namespace detail {

/// A file target under its temporary name, its space reserved, mapped for writing.
class mapped_output {
 public:
  /// `resident_limit`: the process's memory limit, which the mapping's pages are kept within
  /// (0: none).
  mapped_output(const std::string& path, std::uint64_t bytes, std::uint64_t resident_limit)
      : target_(classify_output(path)),
        temporary_(unfinished_name(target_.destination)),
        registration_(temporary_),
        bytes_(bytes) {
    EPSJOIN_ENSURE(target_.kind == output_kind::file, error, path, ": ", target_.what,
                   " cannot be mapped");
    fd_ = open_temporary(target_, temporary_, O_RDWR);
    // Reserved now, so a full disk is an error here and not a SIGBUS in the middle of a row.
    if (const int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(std::max<std::uint64_t>(bytes, 1)));
        err != 0) {
      discard();
      io_fail(path, "cannot reserve ", bytes, " bytes: ", std::strerror(err));
    }
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      discard();
      io_fail(path, "cannot map for writing: ", std::strerror(err));
    }
    data_ = static_cast<char*>(p);
    bound_ = std::make_unique<resident_bound>(data_, bytes_, resident_limit);
  }
  ~mapped_output() {
    if (fd_ >= 0) discard();
  }
  mapped_output(const mapped_output&) = delete;
  mapped_output& operator=(const mapped_output&) = delete;

  char* data() const noexcept { return data_; }

  /// Unmaps, closes and moves the file into place.
  void commit() {
    bound_.reset();  // the watcher stops before the mapping goes
    const bool unmapped = ::munmap(data_, bytes_) == 0;
    data_ = nullptr;
    const bool closed = ::close(fd_) == 0;
    fd_ = -1;
    if (!unmapped || !closed ||
        std::rename(temporary_.c_str(), target_.destination.c_str()) != 0) {
      const int err = errno;
      ::unlink(temporary_.c_str());
      io_fail(target_.path, "write failed: ", std::strerror(err));
    }
  }

 private:
  void discard() noexcept {
    bound_.reset();
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = nullptr;
    ::close(fd_);
    fd_ = -1;
    ::unlink(temporary_.c_str());
  }
  output_target target_;
  std::string temporary_;
  unfinished_output registration_;
  std::uint64_t bytes_;
  int fd_ = -1;
  char* data_ = nullptr;
  std::unique_ptr<resident_bound> bound_;
};

/// A target written with plain writes at given positions: what is written passes through the
/// page cache, not the process's memory. A file target is written under its temporary name; a
/// stream target in place, where every write must start where the last one ended.
class written_output {
 public:
  explicit written_output(const std::string& path) : target_(classify_output(path)) {
    if (target_.kind == output_kind::stream) {
      fd_ = open_stream(target_);
      return;
    }
    temporary_ = unfinished_name(target_.destination);
    registration_ = std::make_unique<unfinished_output>(temporary_);
    fd_ = open_temporary(target_, temporary_, O_WRONLY);
  }
  ~written_output() {
    if (fd_ >= 0) discard();
  }
  written_output(const written_output&) = delete;
  written_output& operator=(const written_output&) = delete;

  /// Reserves the file's space where the file system can do so at once (a full disk is then an
  /// error before the join writes anything); elsewhere a full disk fails the write that meets it.
  void reserve(std::uint64_t bytes) {
#if defined(__linux__)
    if (target_.kind == output_kind::file && bytes > 0 &&
        ::fallocate(fd_, 0, 0, static_cast<off_t>(bytes)) != 0 && errno == ENOSPC) {
      const int err = errno;
      discard();
      io_fail(target_.path, "cannot reserve ", bytes, " bytes: ", std::strerror(err));
    }
#else
    (void)bytes;
#endif
  }

  void write_at(std::uint64_t at, const void* data, std::size_t bytes) {
    EPSJOIN_ENSURE(target_.kind == output_kind::file || at == position_, error, target_.path,
                   ": a write at byte ", at, " after ", position_, " bytes of ", target_.what,
                   ", which cannot seek");
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = target_.kind == output_kind::file
                            ? ::pwrite(fd_, p, bytes, static_cast<off_t>(at))
                            : ::write(fd_, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        discard();
        io_fail(target_.path, "write failed: ", std::strerror(err));
      }
      p += n;
      at += static_cast<std::uint64_t>(n);
      bytes -= static_cast<std::size_t>(n);
    }
    position_ = at;
  }

  /// Closes, and moves a file into place.
  void commit() {
    const bool closed = ::close(fd_) == 0;
    fd_ = -1;
    if (!closed || (!temporary_.empty() &&
                    std::rename(temporary_.c_str(), target_.destination.c_str()) != 0)) {
      const int err = errno;
      if (!temporary_.empty()) ::unlink(temporary_.c_str());
      io_fail(target_.path, "write failed: ", std::strerror(err));
    }
  }

 private:
  void discard() noexcept {
    ::close(fd_);
    fd_ = -1;
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
  }
  output_target target_;
  std::string temporary_;
  std::unique_ptr<unfinished_output> registration_;
  int fd_ = -1;
  std::uint64_t position_ = 0;
};

}  // namespace detail

using detail::csr_header_bytes;

csr_file_sink::csr_file_sink(std::string path, bool sort_neighbors)
    : path_(std::move(path)), sort_neighbors_(sort_neighbors), collected_(sort_neighbors) {
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

row_destination csr_file_sink::begin_rows(std::span<const std::uint32_t> counts) {
  EPSJOIN_ENSURE(counts.size() == n_queries_ && !rows_, error, "csr_file_sink: begin_rows with ",
                 counts.size(), " rows for ", n_queries_, " queries, or twice");
  rows_ = true;
  // A stream cannot take rows in any order: they are laid out in memory and written at finish.
  if (in_place_) return collected_.begin_rows(counts);
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

void csr_file_sink::consume_row_block(std::size_t, std::span<const std::uint64_t> offsets,
                                      std::span<const std::uint32_t> neighbors) {
  EPSJOIN_ENSURE(stream_ != nullptr && !offsets.empty(), error,
                 "csr_file_sink: a row block before begin_row_blocks");
  const std::span<const std::uint32_t> ids =
      sort_neighbors_ ? detail::sorted_row_block(offsets, neighbors, sorted_) : neighbors;
  stream_->write_at(neighbors_at_ + offsets.front() * sizeof(std::uint32_t), ids.data(),
                    ids.size_bytes());
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
