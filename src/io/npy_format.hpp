#pragma once
// The NumPy .npy container: header writing here, header parsing in npy_read.cpp.

#include <cstdint>
#include <string>
#include <string_view>

namespace epsjoin::detail {

/// Bytes of a version 1.0 .npy header (magic to the final '\n') for a C-order 2-D array;
/// padded with spaces to a multiple of 64 bytes and to at least `min_bytes`, so a header
/// written before the row count is known can be rewritten in place once it is.
std::string npy_header(std::string_view descr, std::uint64_t rows, std::uint64_t cols,
                       std::size_t min_bytes = 0);

/// Size of the header npy_header writes for any row count up to 2^64 - 1 (fixed width).
constexpr std::size_t npy_fixed_header_bytes = 128;

}  // namespace epsjoin::detail
