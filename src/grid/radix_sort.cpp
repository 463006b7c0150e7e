// Stable parallel LSD radix sort of (key, uint32 value) pairs.
//
// Each pass: every worker histograms its contiguous chunk, one exclusive scan over
// (digit, chunk) gives every chunk its write offsets, every worker scatters its chunk in order.
// Chunks are scattered in chunk order within a digit, so the sort is stable, and the result is
// the same for any number of threads. Passes whose digit is the same for all keys are skipped.

#include "grid/radix_sort.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/parallel.hpp"
#include "grid/host_index.hpp"

namespace epsjoin::detail::grid {

template <class K>
bool radix_sort_pairs(K* keys, std::uint32_t* values, K* keys_scratch,
                      std::uint32_t* values_scratch, std::size_t n, int key_bits,
                      unsigned threads) {
  if (n < 2 || key_bits <= 0) return false;
  key_bits = std::min(key_bits, static_cast<int>(8 * sizeof(K)));
  constexpr int max_digit_bits = 11;  // 2048 counters per chunk: 16 KiB, stays in L1
  const int passes = (key_bits + max_digit_bits - 1) / max_digit_bits;
  const int digit_bits = (key_bits + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  const K digit_mask = static_cast<K>(buckets - 1);
  // Chunks of at least 64 Ki pairs: below that, a thread's start costs more than it sorts.
  const std::size_t chunks =
      std::clamp<std::size_t>(n / (std::size_t{1} << 16), 1, std::max(1u, threads));
  const std::size_t chunk_len = (n + chunks - 1) / chunks;
  std::vector<std::size_t> hist(chunks * buckets);

  K* from_k = keys;
  K* to_k = keys_scratch;
  std::uint32_t* from_v = values;
  std::uint32_t* to_v = values_scratch;
  bool in_scratch = false;
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * digit_bits;
    detail::parallel_for(static_cast<unsigned>(chunks), chunks, 1,
                         [&](std::size_t c, std::size_t, unsigned) {
      std::size_t* h = hist.data() + c * buckets;
      std::fill(h, h + buckets, std::size_t{0});
      const std::size_t end = std::min(n, (c + 1) * chunk_len);
      for (std::size_t i = c * chunk_len; i < end; ++i) ++h[(from_k[i] >> shift) & digit_mask];
    });
    // Exclusive scan in (digit, chunk) order; skip the pass when one digit holds every key.
    std::size_t sum = 0;
    bool trivial = false;
    for (std::size_t b = 0; b < buckets && !trivial; ++b) {
      std::size_t digit_total = 0;
      for (std::size_t c = 0; c < chunks; ++c) digit_total += hist[c * buckets + b];
      trivial = digit_total == n;
      for (std::size_t c = 0; c < chunks; ++c) {
        const std::size_t count = hist[c * buckets + b];
        hist[c * buckets + b] = sum;
        sum += count;
      }
    }
    if (trivial) continue;
    detail::parallel_for(static_cast<unsigned>(chunks), chunks, 1,
                         [&](std::size_t c, std::size_t, unsigned) {
      std::size_t* offset = hist.data() + c * buckets;
      const std::size_t end = std::min(n, (c + 1) * chunk_len);
      for (std::size_t i = c * chunk_len; i < end; ++i) {
        const std::size_t to = offset[(from_k[i] >> shift) & digit_mask]++;
        to_k[to] = from_k[i];
        to_v[to] = from_v[i];
      }
    });
    std::swap(from_k, to_k);
    std::swap(from_v, to_v);
    in_scratch = !in_scratch;
  }
  return in_scratch;
}

template bool radix_sort_pairs<std::uint32_t>(std::uint32_t*, std::uint32_t*, std::uint32_t*,
                                              std::uint32_t*, std::size_t, int, unsigned);
template bool radix_sort_pairs<std::uint64_t>(std::uint64_t*, std::uint32_t*, std::uint64_t*,
                                              std::uint32_t*, std::size_t, int, unsigned);

void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values,
                      int key_bits, unsigned threads) {
  const std::size_t n = keys.size();
  std::vector<std::uint64_t> keys2(n);
  std::vector<std::uint32_t> values2(n);
  if (radix_sort_pairs(keys.data(), values.data(), keys2.data(), values2.data(), n, key_bits,
                       threads)) {
    keys.swap(keys2);
    values.swap(values2);
  }
}

}  // namespace epsjoin::detail::grid
