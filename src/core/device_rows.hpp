#pragma once
// A join whose rows never leave the device: a consumer above the engines (DBSCAN's union-find,
// src/cluster) takes the counting pass's per-point counts and then each filled segment of rows
// where they lie, in device memory, instead of a sink on the host. The row-filling GPU engines
// (the row_join pipeline) offer it; the others do not, and the caller keeps its host path.
//
// Plain C++: the stream is CUDA's opaque handle, declared here so that core stays CUDA-free.

#include <cstdint>
#include <optional>

#include "epsjoin/join.hpp"

struct CUstream_st;

namespace epsjoin::detail {

/// Rows [first, end) of the query positions, as they lie on the device: position p's caller id
/// is ids[p], and its neighbours (caller ids) are
/// neighbors[row_offset[p] - begin, row_offset[p + 1] - begin). Every pointer is device memory.
struct device_row_segment {
  std::uint32_t first = 0, end = 0;
  const std::uint32_t* ids = nullptr;
  const std::uint64_t* row_offset = nullptr;
  std::uint64_t begin = 0;
  const std::uint32_t* neighbors = nullptr;
};

/// What a device-rows join hands its consumer, in stream order on `stream`: the counts once,
/// then every segment; each pointer is valid only until the call's work on `stream` is done.
/// Over one self-join every ordered pair (i, j), i != j, is in exactly one row, i's.
class device_row_consumer {
 public:
  virtual ~device_row_consumer() = default;
  /// counts[p]: neighbours of query position p, self excluded; ids[p]: its caller id
  /// (a permutation of [0, positions) for a self-join). Device memory.
  virtual void take_counts(const std::uint32_t* counts, const std::uint32_t* ids,
                           std::uint32_t positions, CUstream_st* stream) = 0;
  virtual void take_rows(const device_row_segment& rows, CUstream_st* stream) = 0;
};

/// A self-join (options.include_self ignored: no self pair) whose rows go to `consumer` on the
/// device. Returns nullopt, having run nothing, when the engine options name (or "auto" picks)
/// has no device-rows path; with no points, the consumer is never called.
std::optional<join_stats> self_join_on_device(resources& res, dataset_view points,
                                              const join_options& options,
                                              device_row_consumer& consumer);

}  // namespace epsjoin::detail
