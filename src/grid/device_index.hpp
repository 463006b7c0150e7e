#pragma once
// A host copy of the GPU-built index, for comparing it with the host index in tests.
// Plain C++: callable from code compiled without nvcc.

#include <cstdint>
#include <span>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/resources.hpp"
#include "grid/geometry.hpp"

namespace epsjoin::detail::grid {

struct device_index_snapshot {
  std::vector<std::uint64_t> cell_ids;
  std::vector<std::uint32_t> cell_begin;
  std::vector<std::uint32_t> permutation;
  std::vector<double> points;
  std::vector<std::vector<std::uint32_t>> masks;
  std::size_t outside = 0;
};

/// Builds the index on the GPU of `res` and copies every array back.
device_index_snapshot snapshot_device_index(resources& res, dataset_view data, const geometry& geo,
                                            std::span<const int> dim_order);

}  // namespace epsjoin::detail::grid
