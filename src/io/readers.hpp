#pragma once
// One reader per point-set format; read_dataset (read.cpp) picks one. Each validates everything
// it reads and throws io_error naming the file and the line and column or byte offset.

#include <cstddef>
#include <string>
#include <string_view>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail {

/// CSV / whitespace text, float64. `dim` 0 or the dimension every line must have.
dataset read_text(const std::string& path, std::size_t dim);
/// read_text on text already in memory (the fuzzer's entry point); `path` only names it in errors.
dataset parse_text(std::string_view text, std::string_view path, std::size_t dim);

/// NumPy .npy of shape (n, d), <f8 or <f4, C order; keeps the dtype. `dim` as for text.
dataset read_npy(const std::string& path, std::size_t dim);

/// Headerless little-endian float64 or float32 of dimension `dim` (required, > 0).
dataset read_raw(const std::string& path, std::size_t dim, scalar_type type);

}  // namespace epsjoin::detail
