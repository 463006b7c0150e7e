#pragma once
// Instantiation of the tiled kernel over its compile-time dimensions (see launch.cuh).

#include "base/cub_call.cuh"
#include "gpu/lbjoin/launch.cuh"

namespace epsjoin::detail::lbjoin {

template <class T, int Dim, bool Halving, int Prefix = staged_prefix>
void launch_tiled_dim(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                      const row_output& out, pass p, const kernel_launch& config,
                      cudaStream_t stream) {
  const unsigned blocks = config.queue != nullptr ? config.persistent_blocks
                                                  : grid_size(n_items, warps_per_block);
  if (p == pass::count) {
    tiled_kernel<T, Dim, Halving, pass::count, Prefix>
        <<<blocks, block_threads, 0, stream>>>(v, items, n_items, config.queue, out);
  } else {
    tiled_kernel<T, Dim, Halving, pass::fill, Prefix>
        <<<blocks, block_threads, 0, stream>>>(v, items, n_items, config.queue, out);
  }
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving>
void launch_tiled_pattern(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                          const row_output& out, pass p, const kernel_launch& config,
                          cudaStream_t stream) {
  switch (v.d) {
    case 1: return launch_tiled_dim<T, 1, Halving>(v, items, n_items, out, p, config, stream);
    case 2: return launch_tiled_dim<T, 2, Halving>(v, items, n_items, out, p, config, stream);
    case 3: return launch_tiled_dim<T, 3, Halving>(v, items, n_items, out, p, config, stream);
    case 4: return launch_tiled_dim<T, 4, Halving>(v, items, n_items, out, p, config, stream);
    case 5: return launch_tiled_dim<T, 5, Halving>(v, items, n_items, out, p, config, stream);
    case 6: return launch_tiled_dim<T, 6, Halving>(v, items, n_items, out, p, config, stream);
    case 7: return launch_tiled_dim<T, 7, Halving>(v, items, n_items, out, p, config, stream);
    case 8: return launch_tiled_dim<T, 8, Halving>(v, items, n_items, out, p, config, stream);
    default:
      if (config.stage_dims == 16 && v.d >= 16) {
        return launch_tiled_dim<T, 0, Halving, 16>(v, items, n_items, out, p, config, stream);
      }
      return launch_tiled_dim<T, 0, Halving>(v, items, n_items, out, p, config, stream);
  }
}

template <class T>
void launch_tiled(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                  const row_output& out, pass p, const kernel_launch& config, cudaStream_t stream) {
  if (config.halving) {
    launch_tiled_pattern<T, true>(v, items, n_items, out, p, config, stream);
  } else {
    launch_tiled_pattern<T, false>(v, items, n_items, out, p, config, stream);
  }
}

}  // namespace epsjoin::detail::lbjoin
