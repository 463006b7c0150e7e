#pragma once
// What a kernel of the FP16 direct formula is handed by the pipeline both of its engines share
// (direct_join.cuh): meta-1q's on the tensor cores (tensor/meta1q/) and gds-join's FP16
// arithmetic on CUDA cores (gpu/gds/half_kernel.cuh). Each engine passes its own launcher in,
// so neither includes the other.

#include <cstdint>
#include <type_traits>

#include "gpu/agents/kernel_contract.cuh"
#include "tensor/fp16/direct_view.cuh"

namespace epsjoin::detail::fp16 {

/// Which kernel joins with the FP16 direct formula.
struct direct_kernel {
  bool tensor_cores = true;  ///< meta-1q's; else gds-join's on CUDA cores
  bool half_sums = false;    ///< sums in FP16, else FP32
  unsigned lanes = 8;        ///< CUDA cores: lanes per query (1-32, a power of two)
};

/// One pass over `items` (meta-1q: up to 32 queries of a cell each; CUDA cores: one query each;
/// config: the pattern and the queue).
template <class T>
using direct_launch = void (*)(const row_join::join_view<T>& v, const direct_view& m,
                               const row_join::work_item* items, std::uint32_t n_items,
                               const row_join::row_output& out, row_join::pass p,
                               const row_join::launch_config& config, const direct_kernel& kernel,
                               cudaStream_t stream);

/// An engine's launcher in each precision.
struct direct_launchers {
  direct_launch<float> f32 = nullptr;
  direct_launch<double> f64 = nullptr;

  template <class T>
  direct_launch<T> of() const {
    if constexpr (std::is_same_v<T, float>) {
      return f32;
    } else {
      return f64;
    }
  }
};

/// Calls `launch.template operator()<Halving, Pass, HalfSums>()` with the run-time choices as
/// template arguments: the kernels are instantiated for each combination.
template <class Launch>
void dispatch_direct(bool halving, row_join::pass p, bool half_sums, Launch&& launch) {
  using row_join::pass;
  auto sums = [&]<bool Halving, pass Pass>() {
    if (half_sums) {
      launch.template operator()<Halving, Pass, true>();
    } else {
      launch.template operator()<Halving, Pass, false>();
    }
  };
  if (halving) {
    if (p == pass::count) {
      sums.template operator()<true, pass::count>();
    } else {
      sums.template operator()<true, pass::fill>();
    }
  } else if (p == pass::count) {
    sums.template operator()<false, pass::count>();
  } else {
    sums.template operator()<false, pass::fill>();
  }
}

}  // namespace epsjoin::detail::fp16
