#include "cpu/super_ego/parallel_sort.hpp"

namespace epsjoin::detail::ego {

void radix_sort_by_key(big_vector<key_index>& items, unsigned key_bits, unsigned threads) {
  const std::size_t n = items.size();
  if (n < 2 || key_bits == 0) return;
  // Few passes matter more than small histograms: up to 11 bits a pass (2048 buckets).
  const unsigned passes = (key_bits + 10) / 11;
  const unsigned digit_bits = (key_bits + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  const std::uint64_t mask = buckets - 1;
  // Blocks are fixed ranges, whichever worker runs them, so the scatter order is the input order.
  const std::size_t blocks = std::clamp<std::size_t>(n / 65536, 1, std::max(1u, threads) * 2);
  std::vector<std::size_t> bound(blocks + 1);
  for (std::size_t b = 0; b <= blocks; ++b) bound[b] = n * b / blocks;

  big_vector<key_index> other(n);
  big_vector<key_index>* src = &items;
  big_vector<key_index>* dst = &other;
  std::vector<std::size_t> count(blocks * buckets);
  for (unsigned pass = 0; pass < passes; ++pass) {
    const unsigned shift = pass * digit_bits;
    std::fill(count.begin(), count.end(), 0);
    parallel_for(threads, blocks, 1, [&](std::size_t b0, std::size_t b1, unsigned) {
      for (std::size_t b = b0; b < b1; ++b) {
        std::size_t* c = count.data() + b * buckets;
        for (std::size_t i = bound[b]; i < bound[b + 1]; ++i) ++c[((*src)[i].key >> shift) & mask];
      }
    });
    // Turn counts into start offsets: digit-major, then block order within a digit.
    std::size_t offset = 0;
    bool trivial = false;
    for (std::size_t digit = 0; digit < buckets; ++digit) {
      std::size_t in_digit = 0;
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t c = count[b * buckets + digit];
        count[b * buckets + digit] = offset;
        offset += c;
        in_digit += c;
      }
      if (in_digit == n) trivial = true;
    }
    if (trivial) continue;  // every item has this digit: the pass would copy in place
    parallel_for(threads, blocks, 1, [&](std::size_t b0, std::size_t b1, unsigned) {
      for (std::size_t b = b0; b < b1; ++b) {
        std::size_t* c = count.data() + b * buckets;
        for (std::size_t i = bound[b]; i < bound[b + 1]; ++i) {
          const key_index& item = (*src)[i];
          (*dst)[c[(item.key >> shift) & mask]++] = item;
        }
      }
    });
    std::swap(src, dst);
  }
  if (src != &items) items.swap(other);
}

}  // namespace epsjoin::detail::ego
