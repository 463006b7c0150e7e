#include "core/row_copy.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.hpp"

namespace epsjoin::detail {

namespace {

// Below this many ids a piece is not worth another thread.
constexpr std::uint64_t min_ids_per_thread = std::uint64_t{1} << 16;

// Calls f(p, begin, end) for every position p whose row meets layout [lo, hi), with the
// intersection [begin, end) in layout coordinates.
template <class F>
void for_each_row_part(const row_layout& layout, std::uint64_t lo, std::uint64_t hi, F&& f) {
  if (lo >= hi) return;
  // The last position whose row starts at or before lo (rows may be empty, so skip ahead).
  auto it = std::upper_bound(layout.offsets.begin(), layout.offsets.end() - 1, lo);
  std::size_t p = static_cast<std::size_t>(it - layout.offsets.begin()) - 1;
  const std::size_t positions = layout.ids.size();
  for (; p < positions && layout.offsets[p] < hi; ++p) {
    const std::uint64_t b = std::max(lo, layout.offsets[p]);
    const std::uint64_t e = std::min(hi, layout.offsets[p + 1]);
    if (b < e) f(p, b, e);
  }
}

template <class Body>
void split_piece(std::uint64_t first, std::size_t size, unsigned threads, Body&& body) {
  const std::uint64_t parts = std::clamp<std::uint64_t>(size / min_ids_per_thread, 1, threads);
  const std::uint64_t step = (size + parts - 1) / parts;
  parallel_for(static_cast<unsigned>(parts), parts, 1, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t part = b; part < e; ++part) {
      const std::uint64_t lo = first + part * step;
      const std::uint64_t hi = first + std::min<std::uint64_t>(size, (part + 1) * step);
      body(lo, hi);
    }
  });
}

}  // namespace

void copy_rows(const row_layout& layout, std::uint64_t first, std::span<const std::uint32_t> piece,
               const row_destination& dest, unsigned threads) {
  split_piece(first, piece.size(), threads, [&](std::uint64_t lo, std::uint64_t hi) {
    for_each_row_part(layout, lo, hi, [&](std::size_t p, std::uint64_t b, std::uint64_t e) {
      std::uint32_t* to = dest.neighbors + dest.starts[layout.ids[p]] + (b - layout.offsets[p]);
      std::memcpy(to, piece.data() + (b - first), (e - b) * sizeof(std::uint32_t));
    });
  });
}

void emit_rows_as_pairs(const row_layout& layout, std::uint64_t first,
                        std::span<const std::uint32_t> piece, result_sink& sink, unsigned threads) {
  constexpr std::size_t batch = std::size_t{1} << 15;
  split_piece(first, piece.size(), threads, [&](std::uint64_t lo, std::uint64_t hi) {
    std::vector<index_pair> pairs;
    pairs.reserve(batch);
    for_each_row_part(layout, lo, hi, [&](std::size_t p, std::uint64_t b, std::uint64_t e) {
      const std::uint32_t query = layout.ids[p];
      for (std::uint64_t at = b; at < e; ++at) {
        pairs.push_back({query, piece[at - first]});
        if (pairs.size() == batch) {
          sink.consume(pairs);
          pairs.clear();
        }
      }
    });
    if (!pairs.empty()) sink.consume(pairs);
  });
}

}  // namespace epsjoin::detail
