#pragma once
// Cutting the queries of a GPU join into batches whose results fit a buffer (GPU-SJ's scheme,
// paper 001 sec. 4.1), and re-cutting a batch that overflowed. Host-only, so it is tested
// without a GPU.

#include <cstdint>
#include <vector>

namespace epsjoin::detail {

/// Queries first, first + stride, first + 2 stride, ... (count of them). Batches are planned
/// contiguous (stride 1): queries are in cell order, so the threads of a warp share cells and
/// their candidate loads coalesce. (Paper 001 interleaves batches with a large stride to even out
/// their result sizes; on the H100 that made every thread of a warp read a different cell and
/// the pairs kernel up to 100x slower than the same join counted in order. Uneven batches are
/// caught by the overflow check and re-cut instead.)
struct strided_batch {
  std::uint64_t first = 0;
  std::uint64_t stride = 1;
  std::uint64_t count = 0;
  friend bool operator==(const strided_batch&, const strided_batch&) = default;
};

/// ceil(estimate / capacity) batches (at least `min_batches` when there are that many queries),
/// together covering every query of [0, n_queries) exactly once.
std::vector<strided_batch> plan_batches(std::uint64_t n_queries, std::uint64_t estimated_pairs,
                                        std::uint64_t capacity, std::uint64_t min_batches = 1);

/// A batch whose `produced` results exceeded `capacity`: its queries re-cut into enough
/// consecutive pieces (same stride) that each is expected to fit (one more than the ratio).
/// A single query cannot be split: the caller must grow the buffer instead.
std::vector<strided_batch> split_batch(const strided_batch& batch, std::uint64_t produced,
                                       std::uint64_t capacity);

/// Result size estimate from a sample: GPU-SJ counts the results of a strided fraction of the
/// queries and scales up with a 5% margin.
std::uint64_t estimate_from_sample(std::uint64_t sample_results, std::uint64_t sample_queries,
                                   std::uint64_t n_queries, double margin = 1.05);

}  // namespace epsjoin::detail
