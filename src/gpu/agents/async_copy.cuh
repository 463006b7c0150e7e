#pragma once
// cp.async copies into shared memory, the staging of the tiled GEMM-like kernels (ted-join's
// one-cell kernel, meta-16q's): issued, committed as a group and waited on, so a block loads the
// next stages while it multiplies the current one. Before sm_80 a plain copy stands in (the
// engines refuse such devices before launching; this keeps the code compiling for them).

#include <cstdint>

namespace epsjoin::detail::agents {

/// Copies one element into shared memory, or zeros it (`valid` false: nothing is read).
template <class T>
__device__ __forceinline__ void copy_async(T* shared, const T* global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(to), "l"(global),
               "n"(sizeof(T)), "r"(valid ? static_cast<unsigned>(sizeof(T)) : 0u));
#else
  *shared = valid ? *global : T(0);
#endif
}

__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int Pending>
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

/// Copies 16 bytes into shared memory, or zeros them (`valid` false: nothing is read).
__device__ __forceinline__ void copy16_async(void* shared, const void* global, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(global),
               "r"(valid ? 16u : 0u));
#else
  *static_cast<uint4*>(shared) = valid ? *static_cast<const uint4*>(global) : uint4{0, 0, 0, 0};
#endif
}

}  // namespace epsjoin::detail::agents
