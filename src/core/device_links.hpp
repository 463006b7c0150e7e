#pragma once
// A self-join whose pairs never leave the device, nor even become rows: a consumer above the
// engines (DBSCAN, src/cluster) takes the counting pass's per-point counts on the device and
// answers with a union-find there (base/core_links.hpp); the filling pass then links each pair
// it finds into it instead of writing the pair anywhere. The row-filling GPU engines (the row_join
// pipeline) offer it; the others do not, and the caller keeps its host path.
//
// Plain C++: the stream is CUDA's opaque handle, declared here so that core stays CUDA-free.

#include <cstdint>
#include <optional>

#include "base/core_links.hpp"
#include "epsjoin/join.hpp"

struct CUstream_st;

namespace epsjoin::detail {

/// What a linking join asks of its consumer, in stream order on `stream`.
class device_link_consumer {
 public:
  virtual ~device_link_consumer() = default;
  /// Called once the engine is known to link here, before its index is built: host work that
  /// can overlap the whole join starts now.
  virtual void linking_starts() {}
  /// counts[p]: neighbours of query position p, self excluded; ids[p]: its caller id (a
  /// permutation of [0, positions)). Device memory, valid until the call's work on `stream` is
  /// done. Returns the union-find the filling pass links into, its core flags and roots set
  /// from the counts by work queued on `stream`.
  virtual core_links take_counts(const std::uint32_t* counts, const std::uint32_t* ids,
                                 std::uint32_t positions, CUstream_st* stream) = 0;
};

/// A self-join (options.include_self ignored: no self pair) whose pairs are linked into
/// `consumer`'s union-find on the device. Each link covers both directions of a pair; a pair is
/// linked once under LID-UNICOMP and twice under FULL (once from each row), which changes
/// nothing. Returns nullopt, having run nothing, when the engine options name (or "auto"
/// picks) cannot link; with no points, the consumer is never called.
std::optional<join_stats> self_join_on_device(resources& res, dataset_view points,
                                              const join_options& options,
                                              device_link_consumer& consumer);

}  // namespace epsjoin::detail
