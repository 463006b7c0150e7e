#pragma once
// Host-side launch of ted-join's kernels; each precision's instantiations live in their own
// translation unit (ted_f32.cu, ted_f64.cu).

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"
#include "tensor/ted/ted_gemm_kernel.cuh"

namespace epsjoin::detail::ted {

template <class T>
void launch_ted(const join_view<T>& v, const ted_view& t, const work_item* items,
                std::uint32_t n_items, const row_output& out, pass p,
                const row_join::launch_config& config, cudaStream_t stream);

/// The one-cell join kernel (ted_gemm_kernel.cuh) over `items`, against candidates [0, n_data).
template <class T>
void launch_ted_gemm(const join_view<T>& v, const ted_view& t, std::uint32_t n_data,
                     const work_item* items, std::uint32_t n_items, const row_output& out, pass p,
                     bool halving, gemm::mma_shape shape, cudaStream_t stream);

/// Fills `norms` ([n x checkpoints]) for `points` ([n x d]).
template <class T>
void launch_prefix_norms(const T* points, std::uint32_t n, int d, int checkpoints, double* norms,
                         cudaStream_t stream);

}  // namespace epsjoin::detail::ted
