#pragma once
// CUB's two-phase calls (ask the temporary size, then run) with the temporary storage taken
// from a grow-only buffer owned by the GPU state, so repeated joins allocate nothing.

#include <cuda_runtime.h>

#include <cstddef>

#include "base/cuda_check.cuh"
#include "base/memory.cuh"

namespace epsjoin::detail {

/// `call(void* temp, std::size_t& bytes)` must return the cudaError_t of one CUB algorithm.
template <class Call>
void cub_call(device_buffer<unsigned char>& scratch, Call&& call) {
  std::size_t bytes = 0;
  EPSJOIN_CUDA_TRY(call(nullptr, bytes));
  scratch.reserve(bytes);
  EPSJOIN_CUDA_TRY(call(static_cast<void*>(scratch.data()), bytes));
}

inline unsigned grid_size(std::size_t work, unsigned block) {
  return static_cast<unsigned>((work + block - 1) / block);
}

}  // namespace epsjoin::detail
