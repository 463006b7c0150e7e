#pragma once
// Two ways to write a table file larger than memory: through a shared mapping of the file, whose
// pages the kernel writes back (kept within the process's memory limit), or with plain writes at
// given positions, which a stream target (standard output, a device, a FIFO) takes too. Both
// write a file target under its temporary name, renamed into place only when complete.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "epsjoin/io.hpp"
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
        fail_writes();
        io_fail(target_.path, "write failed: ", std::strerror(err));
      }
      p += n;
      at += static_cast<std::uint64_t>(n);
      bytes -= static_cast<std::size_t>(n);
    }
    // A file takes writes from several threads at once (row blocks in any order); only a
    // stream, written from one thread in order, keeps its position.
    if (target_.kind != output_kind::file) position_ = at;
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
  // A failed write removes the unfinished file at once, but the descriptor stays open until the
  // writer goes: other threads may still be writing through it, and a number closed under them
  // could be reused by another file.
  void fail_writes() noexcept {
    if (failed_.exchange(true)) return;
    if (target_.kind != output_kind::file) {
      discard();
    } else if (!temporary_.empty()) {
      ::unlink(temporary_.c_str());
    }
  }
  output_target target_;
  std::string temporary_;
  std::unique_ptr<unfinished_output> registration_;
  int fd_ = -1;
  std::uint64_t position_ = 0;
  std::atomic<bool> failed_{false};
};

}  // namespace detail

}  // namespace epsjoin
