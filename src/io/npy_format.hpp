#pragma once
// The NumPy .npy container: header writing and header parsing. The array data that follows the
// header is read and written by npy_read.cpp, write.cpp and the pair sinks.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace epsjoin::detail {

/// Bytes of a version 1.0 .npy header (magic to the final '\n') for a C-order 2-D array;
/// padded with spaces to a multiple of 64 bytes and to at least `min_bytes`, so a header
/// written before the row count is known can be rewritten in place once it is.
std::string npy_header(std::string_view descr, std::uint64_t rows, std::uint64_t cols,
                       std::size_t min_bytes = 0);

/// The same for a 1-D array of `n` elements, shape (n,).
std::string npy_vector_header(std::string_view descr, std::uint64_t n);

/// Size of the header npy_header writes for any row count up to 2^64 - 1 (fixed width).
constexpr std::size_t npy_fixed_header_bytes = 128;

/// The magic string that starts every .npy file.
constexpr std::string_view npy_magic{"\x93NUMPY", 6};

/// Bytes needed to know a header's size: magic, version and a 4-byte length (versions 2, 3).
constexpr std::size_t npy_prefix_bytes = 12;

/// What a .npy header says about the array after it.
struct npy_header_info {
  int major_version = 1;
  std::string descr;  ///< dtype string, e.g. "<f8"
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
  std::size_t data_offset = 0;  ///< bytes from the start of the file to the first element
};

/// Total header size (preamble and dictionary) from the first bytes of a file (all of them when
/// the file is shorter than npy_prefix_bytes). Checks the magic string and the version (1.0,
/// 2.0 or 3.0); throws io_error naming `path` and the byte offset otherwise.
std::size_t npy_header_size(std::string_view first_bytes, std::string_view path);

/// Parses a whole header (the npy_header_size(...) first bytes of the file): the dictionary
/// {'descr': ..., 'fortran_order': ..., 'shape': (...)} written as a Python literal. Throws
/// io_error naming `path` and the byte offset of anything it does not understand.
npy_header_info parse_npy_header(std::string_view header, std::string_view path);

}  // namespace epsjoin::detail
