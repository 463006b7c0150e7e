#pragma once
// One reader per point-set format; read_dataset (read.cpp) picks one. Each validates everything
// it reads and throws io_error naming the file and the line and column or byte offset.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail {

/// CSV / whitespace text, float64. `dim` 0 or the dimension every line must have.
dataset read_text(const std::string& path, std::size_t dim);
/// read_text on text already in memory (the fuzzer's entry point); `path` only names it in errors.
dataset parse_text(std::string_view text, std::string_view path, std::size_t dim);

/// A binary file's shape and where its values start, once its header and size are checked.
struct binary_layout {
  std::size_t n = 0;
  std::size_t d = 0;
  scalar_type type = scalar_type::f64;
  std::uint64_t data_offset = 0;
};

/// NumPy .npy of shape (n, d), <f8 or <f4, C order; keeps the dtype. `dim` as for text.
binary_layout probe_npy(const std::string& path, std::size_t dim);

/// Headerless little-endian float64 or float32 of dimension `dim` (required, > 0).
binary_layout probe_raw(const std::string& path, std::size_t dim, scalar_type type);

/// Rows [first, first + count) of a probed file (clipped to its rows), values checked finite.
dataset read_binary_rows(const std::string& path, const binary_layout& layout, std::size_t first,
                         std::size_t count);

}  // namespace epsjoin::detail
