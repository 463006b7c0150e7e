#pragma once
// Stable parallel LSD radix sort of (key, uint32 value) pairs, and buffers that skip the zeroing
// std::vector does (on one thread) so the first touch happens in the parallel loops.

#include <cstddef>
#include <cstdint>
#include <memory>

namespace epsjoin::detail::grid {

/// n elements of a trivial type, not initialised.
template <class T>
std::unique_ptr<T[]> uninitialized(std::size_t n) {
  return std::unique_ptr<T[]>(new T[n]);
}

/// Sorts (keys[i], values[i]) by the low `key_bits` bits of the keys, stably, with `threads`
/// workers, ping-ponging with the scratch arrays of the same size. Returns true when the sorted
/// pairs ended in the scratch arrays, false when in keys / values. K is uint32_t or uint64_t.
template <class K>
bool radix_sort_pairs(K* keys, std::uint32_t* values, K* keys_scratch,
                      std::uint32_t* values_scratch, std::size_t n, int key_bits,
                      unsigned threads);

}  // namespace epsjoin::detail::grid
