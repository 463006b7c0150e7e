#include "io/io_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <limits>

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

output_file::output_file(const std::string& path)
    : path_(path), temporary_(unfinished_name(path)) {
  registration_ = std::make_unique<unfinished_output>(temporary_);
  file_ = std::fopen(temporary_.c_str(), "wb");
  if (file_ == nullptr) io_fail(path_, "cannot open for writing: ", std::strerror(errno));
}

output_file::~output_file() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  std::remove(temporary_.c_str());
}

void output_file::write_at(std::uint64_t offset, const void* src, std::size_t bytes) {
  const bool ok = std::fseek(file_, static_cast<long>(offset), SEEK_SET) == 0 &&
                  std::fwrite(src, 1, bytes, file_) == bytes &&
                  std::fseek(file_, 0, SEEK_END) == 0;
  if (!ok) io_fail(path_, "write failed: ", std::strerror(errno));
}

void output_file::write(const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  if (std::fwrite(src, 1, bytes, file_) != bytes) {
    io_fail(path_, "write failed after ", written_, " bytes: ", std::strerror(errno));
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
    if (std::rename(temporary_.c_str(), path_.c_str()) == 0) return;
    const int rename_errno = errno;
    std::remove(temporary_.c_str());
    io_fail(path_, "cannot move the finished file into place: ", std::strerror(rename_errno));
  }
  std::remove(temporary_.c_str());
  io_fail(path_, "write failed: ", std::strerror(flushed ? close_errno : flush_errno));
}

}  // namespace epsjoin::detail
