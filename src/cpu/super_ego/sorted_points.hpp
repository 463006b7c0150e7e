#pragma once
// Points as the EGO join sees them: in EGO order, dimensions reordered, computation type.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/super_ego/big_vector.hpp"

namespace epsjoin::detail::ego {

template <class T>
struct sorted_points {
  big_vector<T> values;             ///< [n x d, row-major]
  big_vector<std::uint32_t> ids;    ///< [n] the caller's id of each point
  std::size_t n = 0;
  std::size_t d = 0;
  /// The same values by dimension, for the vector leaf loops: dimension k at
  /// columns[k * column_stride], each column followed by padding.
  big_vector<T> columns;
  std::size_t column_stride = 0;
  const T* row(std::size_t i) const noexcept { return values.data() + i * d; }
  const T* column(std::size_t k) const noexcept { return columns.data() + k * column_stride; }
};

}  // namespace epsjoin::detail::ego
