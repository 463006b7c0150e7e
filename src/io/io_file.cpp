#include "io/io_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "io/output_target.hpp"

namespace epsjoin::detail {

input_file::input_file(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) io_fail(path_, "cannot open for reading: ", std::strerror(errno));
  struct stat info {};
  if (::fstat(::fileno(file_), &info) != 0) {
    const int err = errno;
    std::fclose(file_);
    io_fail(path_, "cannot stat: ", std::strerror(err));
  }
  if (S_ISDIR(info.st_mode)) {
    std::fclose(file_);
    io_fail(path_, "is a directory, not a file");
  }
  regular_ = S_ISREG(info.st_mode);
  size_ = regular_ ? static_cast<std::uint64_t>(info.st_size) : 0;
}

input_file::~input_file() { std::fclose(file_); }

void input_file::require_regular() const {
  if (!regular_) io_fail(path_, "not a regular file (binary input must have a known size)");
}

void input_file::read_exact(void* dst, std::size_t bytes, std::uint64_t offset) {
  const std::size_t got = std::fread(dst, 1, bytes, file_);
  if (got == bytes) return;
  if (std::ferror(file_)) io_fail_at(path_, offset + got, "read failed: ", std::strerror(errno));
  // The size was checked up front, so a short read means the file shrank while being read.
  io_fail_at(path_, offset + got, "unexpected end of file (", bytes - got, " bytes missing)");
}

void input_file::seek(std::uint64_t offset) {
  if (offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()) ||
      ::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0) {
    io_fail_at(path_, offset, "cannot seek here: ", std::strerror(errno));
  }
}

std::size_t input_file::read_some(void* dst, std::size_t bytes) {
  const std::size_t got = std::fread(dst, 1, bytes, file_);
  if (got < bytes && std::ferror(file_)) io_fail(path_, "read failed: ", std::strerror(errno));
  return got;
}

output_file::output_file(const std::string& path) : target_(classify_output(path)) {
  int fd = -1;
  if (target_.kind == output_kind::stream) {
    fd = open_stream(target_);
  } else {
    temporary_ = unfinished_name(target_.destination);
    registration_ = std::make_unique<unfinished_output>(temporary_);
    fd = open_temporary(target_, temporary_, O_WRONLY);
  }
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) {
    const int err = errno;
    ::close(fd);
    discard();
    io_fail(target_.path, "cannot open for writing: ", std::strerror(err));
  }
}

output_file::~output_file() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  discard();
}

void output_file::discard() noexcept {
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

void output_file::write_at(std::uint64_t offset, const void* src, std::size_t bytes) {
  EPSJOIN_ENSURE(can_seek(), error, target_.path, ": write_at on ", target_.what,
                 ", which cannot seek");
  const bool ok = ::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) == 0 &&
                  std::fwrite(src, 1, bytes, file_) == bytes &&
                  ::fseeko(file_, 0, SEEK_END) == 0;
  if (!ok) io_fail(target_.path, "write failed: ", std::strerror(errno));
}

void output_file::write(const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  if (std::fwrite(src, 1, bytes, file_) != bytes) {
    io_fail(target_.path, "write failed after ", written_, " bytes: ", std::strerror(errno));
  }
  written_ += bytes;
}

void output_file::commit() {
  const bool flushed = std::fflush(file_) == 0;
  const int flush_errno = errno;
  std::FILE* f = file_;
  file_ = nullptr;
  const bool closed = std::fclose(f) == 0;
  const int close_errno = errno;
  if (flushed && closed) {
    if (temporary_.empty() || std::rename(temporary_.c_str(), target_.destination.c_str()) == 0) {
      return;
    }
    const int rename_errno = errno;
    discard();
    io_fail(target_.path, "cannot move the finished file into place: ", std::strerror(rename_errno));
  }
  discard();
  io_fail(target_.path, "write failed: ", std::strerror(flushed ? close_errno : flush_errno));
}

}  // namespace epsjoin::detail
