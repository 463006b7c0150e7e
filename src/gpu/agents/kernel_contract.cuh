#pragma once
// What the row-join pipeline (gpu/row_join/) and the kernels that plug into it agree on: the
// work item, the view of the index a kernel reads, where its passes write, and the launch
// settings the pipeline decides (the kernel adds its own). It sits here, below both, with the
// device pieces the kernels share; its names stay in row_join's namespace, whose contract it is.

#include <cstdint>

#include "base/core_links.hpp"
#include "base/emit.cuh"
#include "grid/neighbor_ranges.cuh"

namespace epsjoin::detail::row_join {

/// A unit of work: `count` consecutive query positions from `first`, all in query cell `cell`.
struct work_item {
  std::uint32_t first;
  std::uint32_t count;
  std::uint32_t cell;
};

template <class T>
struct join_view {
  const T* query_points;               // [nq x d] position order
  const std::uint32_t* query_cell_begin;
  const T* data_points;                // [n x d] indexed order
  const std::uint32_t* data_ids;       // position -> caller's id
  const std::uint32_t* range_offsets;  // per query cell, into ranges
  const point_range* ranges;
  int d;
  T eps2;
  bool self_join;
};

/// The counting pass writes `counts`; the filling pass writes `neighbors`, which holds layout
/// elements [segment_begin, ...): row p starts at row_offset[p]. A linking fill (`links` set,
/// core/device_links.hpp) writes no row: each hit links the query's and the neighbour's
/// positions (one index: a self-join), query_ids giving caller ids for the border rule, and
/// neighbors, row_offset and cursor are unused.
struct row_output {
  std::uint32_t* counts = nullptr;     // [nq] by query position
  std::uint32_t* neighbors = nullptr;
  const std::uint64_t* row_offset = nullptr;
  std::uint64_t segment_begin = 0;
  std::uint32_t* cursor = nullptr;     // halving fill: [nq] elements written per row so far
  const std::uint32_t* query_ids = nullptr;  // halving: position -> caller's id
  // Tiled counting pass only, when set: also records every hit as (row position, neighbour id),
  // so the rows can be filled by scattering the records instead of a second pass over the
  // candidates. The counter runs past the capacity; records past it are not written.
  index_pair* records = nullptr;
  unsigned long long* record_count = nullptr;
  unsigned long long record_capacity = 0;
  core_links links{};
};

enum class pass : int { count, fill };

constexpr unsigned block_threads = 256;
constexpr unsigned warps_per_block = block_threads / 32;
constexpr unsigned full_mask = 0xffffffffu;

/// What the pipeline decides about a launch; kernels add their own choices (lbjoin's kernel
/// kind and lanes, for instance) in a struct of their own.
struct launch_config {
  bool halving = false;            ///< LID-UNICOMP self-join
  unsigned* queue = nullptr;       ///< WORKQUEUE counter (zeroed by the caller), or none
  unsigned persistent_blocks = 0;  ///< grid size when a queue hands out the work
};

}  // namespace epsjoin::detail::row_join
