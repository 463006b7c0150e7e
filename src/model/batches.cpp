#include "model/batches.hpp"

#include <algorithm>
#include <cmath>

namespace epsjoin::detail {

std::vector<strided_batch> plan_batches(std::uint64_t n_queries, std::uint64_t estimated_pairs,
                                        std::uint64_t capacity, std::uint64_t min_batches) {
  if (n_queries == 0) return {};
  capacity = std::max<std::uint64_t>(capacity, 1);
  std::uint64_t n = (estimated_pairs + capacity - 1) / capacity;
  n = std::clamp<std::uint64_t>(std::max(n, min_batches), 1, n_queries);
  const std::uint64_t chunk = (n_queries + n - 1) / n;
  std::vector<strided_batch> batches;
  batches.reserve(n);
  for (std::uint64_t first = 0; first < n_queries; first += chunk) {
    batches.push_back({first, 1, std::min(chunk, n_queries - first)});
  }
  return batches;
}

std::vector<strided_batch> split_batch(const strided_batch& batch, std::uint64_t produced,
                                       std::uint64_t capacity) {
  if (batch.count <= 1) return {batch};
  capacity = std::max<std::uint64_t>(capacity, 1);
  const std::uint64_t pieces =
      std::clamp<std::uint64_t>(produced / capacity + 1, 2, batch.count);
  const std::uint64_t length = (batch.count + pieces - 1) / pieces;
  std::vector<strided_batch> out;
  out.reserve(pieces);
  for (std::uint64_t done = 0; done < batch.count; done += length) {
    out.push_back({batch.first + done * batch.stride, batch.stride,
                   std::min(length, batch.count - done)});
  }
  return out;
}

std::uint64_t estimate_from_sample(std::uint64_t sample_results, std::uint64_t sample_queries,
                                   std::uint64_t n_queries, double margin) {
  if (sample_queries == 0) return 0;
  const double scaled = static_cast<double>(sample_results) *
                        static_cast<double>(n_queries) / static_cast<double>(sample_queries);
  return static_cast<std::uint64_t>(std::ceil(scaled * margin));
}

}  // namespace epsjoin::detail
