#include "results/row_copy.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/parallel.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace epsjoin::detail {

namespace {

// Below this many ids a piece is not worth another thread.
constexpr std::uint64_t min_ids_per_thread = std::uint64_t{1} << 16;

// Calls f(p, begin, end) for every row p of the CSR `offsets` that meets [lo, hi), with the
// intersection [begin, end) in layout coordinates.
template <class F>
void for_each_row_part(std::span<const std::uint64_t> offsets, std::uint64_t lo, std::uint64_t hi,
                       F&& f) {
  if (lo >= hi) return;
  // The last row that starts at or before lo (rows may be empty, so skip ahead).
  auto it = std::upper_bound(offsets.begin(), offsets.end() - 1, lo);
  std::size_t p = static_cast<std::size_t>(it - offsets.begin()) - 1;
  const std::size_t rows = offsets.size() - 1;
  for (; p < rows && offsets[p] < hi; ++p) {
    const std::uint64_t b = std::max(lo, offsets[p]);
    const std::uint64_t e = std::min(hi, offsets[p + 1]);
    if (b < e) f(p, b, e);
  }
}

// Rows this long are copied with streaming stores: the table is far larger than the caches and
// is not read again soon, and plain stores would first read every destination line.
constexpr std::size_t min_streamed_ids = 64;

void copy_ids(std::uint32_t* to, const std::uint32_t* from, std::size_t n) {
#if defined(__SSE2__)
  if (n >= min_streamed_ids) {
    for (; (reinterpret_cast<std::uintptr_t>(to) & 15) != 0; --n) *to++ = *from++;
    for (; n >= 4; n -= 4, to += 4, from += 4) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(to),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
    }
  }
#endif
  // memcpy may not take a null pointer even for no bytes, and an empty row of an empty table or
  // piece has none (UBSan, copy_query_rows and copy_run tests).
  if (n != 0) std::memcpy(to, from, n * sizeof(std::uint32_t));
}

void end_streaming() {
#if defined(__SSE2__)
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the join returns
#endif
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
    for_each_row_part(layout.offsets, lo, hi, [&](std::size_t p, std::uint64_t b, std::uint64_t e) {
      std::uint32_t* to = dest.row(layout.ids[p]) + (b - layout.offsets[p]);
      copy_ids(to, piece.data() + (b - first), e - b);
    });
    end_streaming();
  });
}

bool is_contiguous(std::span<const std::uint64_t> offsets, const row_destination& dest,
                   unsigned threads, std::uint32_t slots_before_rows) {
  const std::size_t rows = offsets.empty() ? 0 : offsets.size() - 1;
  if (!dest.one_array() && dest.second_from < rows) return false;
  std::atomic<bool> same{true};
  parallel_for(threads, rows, std::size_t{1} << 18, [&](std::size_t b, std::size_t e, unsigned) {
    if (!same.load(std::memory_order_relaxed)) return;
    for (std::size_t q = b; q < e; ++q) {
      if (dest.starts[q] != offsets[q] + std::uint64_t{slots_before_rows} * q) {
        same = false;
        return;
      }
    }
  });
  return same.load();
}

void copy_run(std::uint32_t* base, std::uint64_t first, std::span<const std::uint32_t> piece,
              unsigned threads) {
  split_piece(first, piece.size(), threads, [&](std::uint64_t lo, std::uint64_t hi) {
    copy_ids(base + lo, piece.data() + (lo - first), hi - lo);
    end_streaming();
  });
}

void copy_query_rows(std::span<const std::uint64_t> offsets, std::uint64_t first,
                     std::span<const std::uint32_t> piece, const row_destination& dest,
                     bool contiguous, unsigned threads) {
  if (contiguous) return copy_run(dest.neighbors, first, piece, threads);
  split_piece(first, piece.size(), threads, [&](std::uint64_t lo, std::uint64_t hi) {
    for_each_row_part(offsets, lo, hi, [&](std::size_t q, std::uint64_t b, std::uint64_t e) {
      copy_ids(dest.row(q) + (b - offsets[q]), piece.data() + (b - first),
               e - b);
    });
    end_streaming();
  });
}

void emit_rows_as_pairs(const row_layout& layout, std::uint64_t first,
                        std::span<const std::uint32_t> piece, result_sink& sink, unsigned threads) {
  constexpr std::size_t batch = std::size_t{1} << 15;
  split_piece(first, piece.size(), threads, [&](std::uint64_t lo, std::uint64_t hi) {
    std::vector<index_pair> pairs;
    pairs.reserve(batch);
    for_each_row_part(layout.offsets, lo, hi, [&](std::size_t p, std::uint64_t b, std::uint64_t e) {
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

std::uint64_t lay_out_offsets(std::span<const std::uint32_t> counts, std::uint32_t extra_per_row,
                              std::uint64_t* offsets, unsigned threads) {
  // Two passes over blocks: each block's sum, then each block's rows from its scanned start.
  constexpr std::size_t block = std::size_t{1} << 18;
  const std::size_t n = counts.size();
  const std::size_t blocks = (n + block - 1) / block;
  std::vector<std::uint64_t> start(blocks + 1, 0);
  parallel_for(threads, blocks, 1, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t k = b; k < e; ++k) {
      std::uint64_t sum = 0;
      for (std::size_t q = k * block; q < std::min(n, (k + 1) * block); ++q) sum += counts[q];
      start[k + 1] = sum + std::uint64_t{extra_per_row} * (std::min(n, (k + 1) * block) - k * block);
    }
  });
  for (std::size_t k = 0; k < blocks; ++k) start[k + 1] += start[k];
  offsets[0] = 0;
  parallel_for(threads, blocks, 1, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t k = b; k < e; ++k) {
      std::uint64_t at = start[k];
      for (std::size_t q = k * block; q < std::min(n, (k + 1) * block); ++q) {
        at += counts[q] + extra_per_row;
        offsets[q + 1] = at;
      }
    }
  });
  return start[blocks];
}

std::span<const std::uint32_t> sorted_row_block(std::span<const std::uint64_t> offsets,
                                                std::span<const std::uint32_t> neighbors,
                                                std::vector<std::uint32_t>& scratch) {
  scratch.assign(neighbors.begin(), neighbors.end());
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    std::sort(scratch.begin() + static_cast<std::ptrdiff_t>(offsets[i] - offsets[0]),
              scratch.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1] - offsets[0]));
  }
  return scratch;
}

void sort_rows(std::span<const std::uint64_t> offsets, std::uint32_t* neighbors, unsigned threads) {
  const std::size_t rows = offsets.empty() ? 0 : offsets.size() - 1;
  parallel_for(threads, rows, 1024, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) std::sort(neighbors + offsets[i], neighbors + offsets[i + 1]);
  });
}

}  // namespace epsjoin::detail
