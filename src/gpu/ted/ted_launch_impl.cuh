#pragma once
// The definitions behind ted_launch.cuh, instantiated once per precision in ted_f32.cu and
// ted_f64.cu (the kernels are large: two translation units build in parallel).

#include "gpu/cub_call.cuh"
#include "gpu/ted/ted_launch.cuh"

namespace epsjoin::detail::ted {

namespace launch_detail {

template <class T, int ColBlocks, bool Halving>
void launch_shape(const join_view<T>& v, const ted_view& t, const work_item* items,
                  std::uint32_t n_items, const row_output& out, pass p,
                  const lbjoin::launch_config& config, cudaStream_t stream) {
  const unsigned blocks =
      config.queue != nullptr ? config.persistent_blocks : grid_size(n_items, warps_per_block);
  if (p == pass::count) {
    ted_kernel<T, ColBlocks, Halving, pass::count>
        <<<blocks, block_threads, 0, stream>>>(v, t, items, n_items, config.queue, out);
  } else {
    ted_kernel<T, ColBlocks, Halving, pass::fill>
        <<<blocks, block_threads, 0, stream>>>(v, t, items, n_items, config.queue, out);
  }
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving>
void launch_pattern(const join_view<T>& v, const ted_view& t, const work_item* items,
                    std::uint32_t n_items, const row_output& out, pass p,
                    const lbjoin::launch_config& config, cudaStream_t stream) {
  if (t.col_blocks == 4) {
    launch_shape<T, 4, Halving>(v, t, items, n_items, out, p, config, stream);
  } else {
    launch_shape<T, 2, Halving>(v, t, items, n_items, out, p, config, stream);
  }
}

}  // namespace launch_detail

template <class T>
void launch_ted(const join_view<T>& v, const ted_view& t, const work_item* items,
                std::uint32_t n_items, const row_output& out, pass p,
                const lbjoin::launch_config& config, cudaStream_t stream) {
  if (config.halving) {
    launch_detail::launch_pattern<T, true>(v, t, items, n_items, out, p, config, stream);
  } else {
    launch_detail::launch_pattern<T, false>(v, t, items, n_items, out, p, config, stream);
  }
}

template <class T>
void launch_prefix_norms(const T* points, std::uint32_t n, int d, int checkpoints, double* norms,
                         cudaStream_t stream) {
  if (n == 0) return;
  prefix_norms_kernel<T>
      <<<grid_size(n, 256), 256, 0, stream>>>(points, n, d, checkpoints, norms);
  EPSJOIN_CHECK_LAUNCH();
}

}  // namespace epsjoin::detail::ted
