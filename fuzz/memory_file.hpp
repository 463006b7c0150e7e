#pragma once
// The binary readers take a path and need a regular file whose size they can ask for. A memfd is
// such a file, kept in memory and reopened through /proc/self/fd, so the fuzzers run the readers'
// own file code (open, fstat, fread) without touching the disk on every input.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace epsjoin::fuzz {

class memory_file {
 public:
  memory_file() : fd_(::memfd_create("epsjoin-fuzz-input", 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~memory_file() { ::close(fd_); }
  memory_file(const memory_file&) = delete;
  memory_file& operator=(const memory_file&) = delete;

  /// Replaces the file's contents with `bytes`; returns the path that opens it.
  const std::string& hold(const std::uint8_t* bytes, std::size_t size) {
    if (::ftruncate(fd_, 0) != 0) fail("ftruncate");
    for (std::size_t done = 0; done < size;) {
      const ssize_t wrote = ::pwrite(fd_, bytes + done, size - done, static_cast<off_t>(done));
      if (wrote <= 0) fail("pwrite");
      done += static_cast<std::size_t>(wrote);
    }
    return path_;
  }

 private:
  [[noreturn]] static void fail(const char* call) {
    std::perror(call);
    std::abort();
  }

  int fd_;
  std::string path_;
};

}  // namespace epsjoin::fuzz
