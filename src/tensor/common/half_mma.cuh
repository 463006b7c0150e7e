#pragma once
// The FP16 tensor-core instruction meta-16q's kernels and meta-1q's share: m16n8k16 with FP16
// inputs and FP32 accumulators.

#include <cstdint>

namespace epsjoin::detail::tensor {

/// acc (upper: row g, lower: row g + 8; columns 2 t, 2 t + 1) += A (16 x 16) B (16 x 8), FP16
/// in, FP32 accumulators. A fragment: {row g, k 2t}, {row g + 8, k 2t}, {row g, k 2t + 8},
/// {row g + 8, k 2t + 8}, each two halves; B fragment: {k 2t, column g}, {k 2t + 8, column g}.
__device__ __forceinline__ void hmma_m16n8k16(float (&upper)[2], float (&lower)[2],
                                              const std::uint32_t (&a)[4],
                                              const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(upper[0]), "+f"(upper[1]), "+f"(lower[0]), "+f"(lower[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();  // the engine refuses devices older than sm_80 before launching
#endif
}

}  // namespace epsjoin::detail::tensor
