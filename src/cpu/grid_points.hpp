#pragma once
// cpu-grid's copies of the points in cell order, in the precision of the computation, and the
// thresholds that make the float32 computation exact.
//
// Low dimensions (d <= soa_max_dims) are stored by column (one array per dimension), so a
// distance loop runs over many candidates at once in SIMD lanes; higher dimensions are stored
// by row, so a distance loop can stop once its partial sum passes eps^2.
//
// float32: the squared distance s computed in float32 from float32 coordinates is within a proven
// bound of the exact one. With D the exact distance and D' the distance between the float32-rounded
// points, |D' - D| <= delta (the rounding of the coordinates, measured while converting) and
// |s - D'^2| <= gamma D'^2 + tiny (gamma = (d + 3) 2^-24, tiny covers underflow). Hence
//   s <= lo = (1 - gamma) (eps - delta)^2 - tiny  implies D <= eps  (a sure pair),
//   s >  hi = (1 + gamma) (eps + delta)^2 + tiny  implies D >  eps  (a sure non-pair),
// and only the few candidates in between are recomputed in float64 from the input values, exactly
// as the oracle computes them. The float32 result therefore equals the float64 one.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail::cpu {

inline constexpr std::size_t soa_max_dims = 8;
/// Zeros after each column of a by-column block.
inline constexpr std::size_t column_pad = 16;

template <class T>
struct thresholds {
  T lo;  ///< s <= lo: within eps for sure
  T hi;  ///< s > hi: beyond eps for sure; otherwise recompute in float64
};

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

/// Gathers input rows permutation[0..n) into a block with columns in `dim_order`. For T = float
/// and float64 input, `center[column]` is subtracted first (keeps offset data accurate) and the
/// rounding measured; pass the same centers for both sides of an A x B join.
template <class T>
point_block<T> gather_block(dataset_view input, std::span<const std::uint32_t> permutation,
                            std::span<const int> dim_order, std::span<const double> center,
                            bool by_column, unsigned threads);

/// lo and hi for float32 given eps, d and the rounding of both sides; for double lo = hi = eps^2.
thresholds<float> float_thresholds(double eps, std::size_t d, std::span<const double> rounding_a,
                                   std::span<const double> rounding_b);
inline thresholds<double> double_thresholds(double eps) { return {eps * eps, eps * eps}; }

/// The oracle's test on input rows: sum over columns in order of (a - b)^2 <= eps^2, in float64.
bool exact_within(dataset_view a, std::size_t i, dataset_view b, std::size_t j, double eps2);

}  // namespace epsjoin::detail::cpu
