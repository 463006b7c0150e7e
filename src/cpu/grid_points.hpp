#pragma once
// cpu-grid's copies of the points in cell order, in the precision of the computation, and the
// rounding float32 brings (its band: float_band.hpp).
//
// Low dimensions (d <= soa_max_dims) are stored by column (one array per dimension), so a
// distance loop runs over many candidates at once in SIMD lanes; higher dimensions are stored
// by row, so a distance loop can stop once its partial sum passes eps^2.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/float_band.hpp"
#include "epsjoin/dataset.hpp"

namespace epsjoin::detail::cpu {

inline constexpr std::size_t soa_max_dims = 8;
/// Zeros after each column of a by-column block.
inline constexpr std::size_t column_pad = 16;

/// The engine's copy of one point set, position order (cell order) of its index.
template <class T>
struct point_block {
  std::size_t n = 0;
  std::size_t d = 0;
  bool by_column = false;
  /// By column: column j at [j * stride, j * stride + n), then `column_pad` zeros (so SIMD loops
  /// may read past a column's end); by row: row i at i * d. Not zeroed first (the parallel
  /// gather is the first touch).
  std::unique_ptr<T[]> values;
  std::size_t stride = 0;
  /// Largest |converted - exact| per column (float32 from float64 input; 0 otherwise).
  std::vector<double> rounding;

  const T* data() const noexcept { return values.get(); }
  const T* column(std::size_t j) const noexcept { return values.get() + j * stride; }
  const T* row(std::size_t i) const noexcept { return values.get() + i * d; }
};

/// Host bytes of a block of n points of d dimensions (gather_block's one allocation).
template <class T>
constexpr std::uint64_t block_bytes(std::uint64_t n, std::uint64_t d, bool by_column) {
  return (by_column ? (n + column_pad) * d : n * d) * sizeof(T);
}

/// Gathers input rows permutation[0..n) into a block with columns in `dim_order`. For T = float
/// and float64 input, `center[column]` is subtracted first (keeps offset data accurate) and the
/// rounding measured; pass the same centers for both sides of an A x B join.
template <class T>
point_block<T> gather_block(dataset_view input, std::span<const std::uint32_t> permutation,
                            std::span<const int> dim_order, std::span<const double> center,
                            bool by_column, unsigned threads);

}  // namespace epsjoin::detail::cpu
