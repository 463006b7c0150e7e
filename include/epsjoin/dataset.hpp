#pragma once
/// @file dataset.hpp
/// @brief Point sets: an owning `dataset` and a non-owning `dataset_view`.
///
/// A dataset is N points x d dimensions, row-major, float64 by default (float32 accepted).
/// @code
///   epsjoin::dataset points(1000, 2);           // zero-filled, float64
///   points.f64()[0 * 2 + 1] = 0.5;              // point 0, dimension 1
///   epsjoin::dataset_view v = points.view();
/// @endcode

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace epsjoin {

/// @brief Element type of a point set or of a computation.
enum class scalar_type : std::uint8_t { f64, f32 };

/// @brief "f64" or "f32".
std::string_view to_string(scalar_type type) noexcept;

/// @brief Bytes per element of `type`.
constexpr std::size_t size_of(scalar_type type) noexcept {
  return type == scalar_type::f64 ? 8 : 4;
}

/// @brief Where the values of a `dataset_view` lie.
enum class memory_space : std::uint8_t {
  host,    ///< host memory (the default)
  device,  ///< memory of the CUDA device `dataset_view::device` (cudaMalloc, a CuPy array, ...)
};

/// @brief A borrowed [n x d, row-major] block of float64 or float32 values, in host memory or,
///        with `space = memory_space::device`, in the memory of a CUDA device.
///
/// Device views are taken by the GPU engines (processor "gpu" or "tensor") without a copy to or
/// from the host: the points' index is built from them on the device, so `join_stats::
/// h2d_point_bytes` stays 0. `device` must be the ordinal of `resources::device()`, and the
/// values must be written (their producing work finished) before the join is called. CPU
/// engines and hegjoin refuse device views with `invalid_argument`.
struct dataset_view {
  const void* data = nullptr;  ///< [host or device] [n x d, row-major], element type `type`
  std::size_t n = 0;           ///< number of points
  std::size_t d = 0;           ///< dimensions per point
  scalar_type type = scalar_type::f64;
  memory_space space = memory_space::host;  ///< where `data` lies
  int device = 0;                           ///< CUDA ordinal of `data` when space == device

  bool on_device() const noexcept { return space == memory_space::device; }

  /// @brief Coordinate `dim` of point `i`, widened to double (slow path, for tests and I/O).
  ///        Host views only.
  double at(std::size_t i, std::size_t dim) const noexcept {
    const std::size_t k = i * d + dim;
    return type == scalar_type::f64 ? static_cast<const double*>(data)[k]
                                    : static_cast<double>(static_cast<const float*>(data)[k]);
  }
};

/// @brief An owning point set. Holds float64 or float32 storage, never both.
class dataset {
 public:
  dataset() = default;
  /// @brief Zero-filled n x d dataset of the given element type.
  dataset(std::size_t n, std::size_t d, scalar_type type = scalar_type::f64);
  /// @brief Takes ownership of row-major float64 values; values.size() must equal n * d.
  dataset(std::vector<double> values, std::size_t d);
  /// @brief Takes ownership of row-major float32 values; values.size() must equal n * d.
  dataset(std::vector<float> values, std::size_t d);

  std::size_t n() const noexcept { return n_; }
  std::size_t d() const noexcept { return d_; }
  scalar_type type() const noexcept { return type_; }
  bool empty() const noexcept { return n_ == 0; }

  /// @brief Row-major float64 storage; only valid when type() == f64.
  double* f64() noexcept { return f64_.data(); }
  const double* f64() const noexcept { return f64_.data(); }
  /// @brief Row-major float32 storage; only valid when type() == f32.
  float* f32() noexcept { return f32_.data(); }
  const float* f32() const noexcept { return f32_.data(); }

  dataset_view view() const noexcept;
  /// @brief A float64 copy of any view (exact for float32 input).
  static dataset to_f64(dataset_view source);
  /// @brief A float32 copy of any view (rounds float64 input to nearest).
  static dataset to_f32(dataset_view source);

 private:
  std::size_t n_ = 0;
  std::size_t d_ = 0;
  scalar_type type_ = scalar_type::f64;
  std::vector<double> f64_;
  std::vector<float> f32_;
};

}  // namespace epsjoin
