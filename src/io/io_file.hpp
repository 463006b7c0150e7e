#pragma once
// Files for the readers and writers: RAII handles whose every failure becomes an io_error that
// names the file, and the message helpers that give every reader the same wording.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <memory>

#include "base/expects.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "io/unfinished.hpp"

namespace epsjoin::detail {

// The binary formats are little-endian and are read and written with a plain fread/fwrite.
static_assert(std::endian::native == std::endian::little,
              "epsjoin I/O assumes a little-endian host");

/// Throws io_error "<path>: <parts...>".
template <class... Parts>
[[noreturn]] void io_fail(std::string_view path, Parts&&... parts) {
  throw io_error(concat(path, ": ", std::forward<Parts>(parts)...));
}

/// Throws io_error "<path>: byte offset <offset>: <parts...>" (binary formats).
template <class... Parts>
[[noreturn]] void io_fail_at(std::string_view path, std::uint64_t offset, Parts&&... parts) {
  throw io_error(concat(path, ": byte offset ", offset, ": ", std::forward<Parts>(parts)...));
}

/// A file opened for reading. Regular files know their size; pipes and devices do not.
class input_file {
 public:
  explicit input_file(const std::string& path);
  ~input_file();
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  const std::string& path() const noexcept { return path_; }
  bool is_regular() const noexcept { return regular_; }
  /// Bytes in the file; only meaningful when is_regular().
  std::uint64_t size() const noexcept { return size_; }
  /// Throws unless the file is a regular file (the binary readers need the size up front).
  void require_regular() const;

  /// Reads exactly `bytes` from the current position; `offset` (where they start) only feeds
  /// the message of a short read.
  void read_exact(void* dst, std::size_t bytes, std::uint64_t offset);
  /// Reads up to `bytes`; returns how many were read (0 at end of file).
  std::size_t read_some(void* dst, std::size_t bytes);
  /// Moves the position to `offset` bytes from the start (a range of a binary file's rows).
  void seek(std::uint64_t offset);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  bool regular_ = false;
  std::uint64_t size_ = 0;
};

/// A result being written to an output path, as io/output_target.hpp classifies it. A file
/// target is written under a temporary name beside it (registered for the signal handlers,
/// io/unfinished.hpp) and renamed over it by commit(), so it appears only complete; the
/// destructor of an uncommitted file (an exception on the way) removes it. A stream target
/// (standard output, a device, a FIFO, a socket) is written in place, in order.
class output_file {
 public:
  explicit output_file(const std::string& path);
  ~output_file();
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  void write(const void* src, std::size_t bytes);
  /// True when write_at may be used: a file target, not a stream.
  bool can_seek() const noexcept { return target_.kind == output_kind::file; }
  /// Overwrites bytes at `offset` (a header whose counts are known only at the end); file
  /// targets only.
  void write_at(std::uint64_t offset, const void* src, std::size_t bytes);
  std::uint64_t written() const noexcept { return written_; }
  /// Flushes, closes and renames to the target; throws io_error if any byte could not be
  /// written.
  void commit();

 private:
  void discard() noexcept;
  output_target target_;
  std::string temporary_;
  std::unique_ptr<unfinished_output> registration_;
  std::FILE* file_ = nullptr;
  std::uint64_t written_ = 0;
};

/// Index of the first NaN or infinity in values[0, count), or `count` when all are finite.
/// Looks at the exponent bits so the loop vectorises.
template <class T>
std::size_t find_non_finite(const T* values, std::size_t count) {
  using bits_t = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  // All exponent bits set: infinity or NaN.
  constexpr bits_t exponent =
      static_cast<bits_t>(sizeof(T) == 8 ? 0x7ff0000000000000ull : 0x7f800000ull);
  constexpr std::size_t block = 4096;
  for (std::size_t begin = 0; begin < count; begin += block) {
    const std::size_t end = std::min(count, begin + block);
    bool bad = false;
    for (std::size_t k = begin; k < end; ++k) {
      bad |= (std::bit_cast<bits_t>(values[k]) & exponent) == exponent;
    }
    if (!bad) continue;
    for (std::size_t k = begin; k < end; ++k) {
      if ((std::bit_cast<bits_t>(values[k]) & exponent) == exponent) return k;
    }
  }
  return count;
}

/// Throws an io_error naming the byte offset, point and dimension of the first NaN or infinity
/// in a block of `count` row-major values of dimension `d` that starts at byte `data_offset`.
template <class T>
void check_finite(std::string_view path, const T* values, std::size_t count, std::size_t d,
                  std::uint64_t data_offset, std::size_t first_point = 0) {
  const std::size_t k = find_non_finite(values, count);
  if (k == count) return;
  io_fail_at(path, data_offset + k * sizeof(T), "point ", first_point + k / d, ", dimension ",
             k % d, " (both 0-based) is ", values[k], "; NaN and infinities are rejected");
}

}  // namespace epsjoin::detail
