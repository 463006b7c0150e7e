#pragma once
// Host-side launch of lbjoin's kernels for a run-time configuration. The kernels are templates
// over precision, dimension (tiled) or lanes per query (query), pattern and pass; each
// precision's instantiations live in their own translation unit so they compile in parallel.

#include <cstdint>

#include "gpu/lbjoin/kernels.cuh"

namespace epsjoin::detail::lbjoin {

/// The tiled kernel (kernels.cuh), or the query kernel (gpu/agents/query_kernel.cuh).
enum class kernel_kind : int { tiled, query };

/// The pipeline's launch settings plus lbjoin's own kernel choice.
struct kernel_launch : row_join::launch_config {
  kernel_kind kind = kernel_kind::tiled;
  unsigned lanes = 8;       ///< query kernel: lanes per query (1, 2, 4, 8, 16, 32)
  unsigned stage_dims = 8;  ///< tiled kernel, d >= 16: dimensions staged in shared memory (8, 16)
};

template <class T>
void launch_tiled(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                  const row_output& out, pass p, const kernel_launch& config, cudaStream_t stream);

template <class T>
void launch_query(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                  const row_output& out, pass p, const kernel_launch& config, cudaStream_t stream);

template <class T>
void launch_join(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                 const row_output& out, pass p, const kernel_launch& config, cudaStream_t stream) {
  if (n_items == 0) return;
  switch (config.kind) {
    case kernel_kind::tiled: return launch_tiled(v, items, n_items, out, p, config, stream);
    case kernel_kind::query: return launch_query(v, items, n_items, out, p, config, stream);
  }
}

}  // namespace epsjoin::detail::lbjoin
