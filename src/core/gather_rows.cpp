#include "core/gather_rows.hpp"

#include <cstring>

#include "base/parallel.hpp"

namespace epsjoin::detail {

namespace {

// Rows ids[b, e) of `from` to `to` + b rows. A copy of a constant size compiles to a few moves,
// where one of a size known only at run time is a library call a point.
template <std::size_t RowBytes>
void copy_rows(const char* from, std::span<const std::uint32_t> ids, char* to, std::size_t b,
               std::size_t e) {
  for (std::size_t k = b; k < e; ++k) {
    std::memcpy(to + k * RowBytes, from + std::size_t{ids[k]} * RowBytes, RowBytes);
  }
}

void copy_rows(const char* from, std::span<const std::uint32_t> ids, char* to, std::size_t b,
               std::size_t e, std::size_t row_bytes) {
  switch (row_bytes) {  // 1-4 and 8 coordinates of float32 or float64
    case 8: return copy_rows<8>(from, ids, to, b, e);
    case 12: return copy_rows<12>(from, ids, to, b, e);
    case 16: return copy_rows<16>(from, ids, to, b, e);
    case 24: return copy_rows<24>(from, ids, to, b, e);
    case 32: return copy_rows<32>(from, ids, to, b, e);
    case 64: return copy_rows<64>(from, ids, to, b, e);
    default:
      for (std::size_t k = b; k < e; ++k) {
        std::memcpy(to + k * row_bytes, from + std::size_t{ids[k]} * row_bytes, row_bytes);
      }
  }
}

}  // namespace

dataset_view gather_rows(dataset_view source, std::span<const std::uint32_t> ids, unsigned threads,
                         fresh_array<char>& bytes) {
  const std::size_t row_bytes = source.d * size_of(source.type);
  bytes = fresh_array<char>(ids.size() * row_bytes);
  char* to = bytes.data();
  const auto* from = static_cast<const char*>(source.data);
  parallel_for(threads, ids.size(), std::size_t{1} << 14,
               [&](std::size_t b, std::size_t e, unsigned) {
                 copy_rows(from, ids, to, b, e, row_bytes);
               });
  dataset_view view = source;
  view.data = to;
  view.n = ids.size();
  return view;
}

}  // namespace epsjoin::detail
