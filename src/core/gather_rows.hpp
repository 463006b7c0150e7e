#pragma once
// The rows of a dataset picked by id, copied into fresh memory on several threads: a device's
// slab of a multi-device join (core/multi_device_join.cpp) before its engine uploads it.

#include <cstdint>
#include <span>

#include "base/fresh_array.hpp"
#include "epsjoin/dataset.hpp"

namespace epsjoin::detail {

/// The rows `ids` of `source`, in that order, into `bytes` (allocated here, on `threads`
/// threads); their view, which lives as long as `bytes`.
dataset_view gather_rows(dataset_view source, std::span<const std::uint32_t> ids, unsigned threads,
                         fresh_array<char>& bytes);

}  // namespace epsjoin::detail
