// ted-join's kernels in double (see ted_launch.cuh).

#include "gpu/cub_call.cuh"
#include "gpu/ted/ted_launch.cuh"

namespace epsjoin::detail::ted {

namespace {

template <int ColBlocks, bool Halving>
void launch_shape(const join_view<double>& v, const ted_view& t, const work_item* items,
                  std::uint32_t n_items, const row_output& out, pass p,
                  const lbjoin::launch_config& config, cudaStream_t stream) {
  const unsigned blocks =
      config.queue != nullptr ? config.persistent_blocks : grid_size(n_items, warps_per_block);
  if (p == pass::count) {
    ted_kernel<double, ColBlocks, Halving, pass::count>
        <<<blocks, block_threads, 0, stream>>>(v, t, items, n_items, config.queue, out);
  } else {
    ted_kernel<double, ColBlocks, Halving, pass::fill>
        <<<blocks, block_threads, 0, stream>>>(v, t, items, n_items, config.queue, out);
  }
  EPSJOIN_CHECK_LAUNCH();
}

template <bool Halving>
void launch_pattern(const join_view<double>& v, const ted_view& t, const work_item* items,
                    std::uint32_t n_items, const row_output& out, pass p,
                    const lbjoin::launch_config& config, cudaStream_t stream) {
  if (t.col_blocks == 4) {
    launch_shape<4, Halving>(v, t, items, n_items, out, p, config, stream);
  } else {
    launch_shape<2, Halving>(v, t, items, n_items, out, p, config, stream);
  }
}

}  // namespace

template <>
void launch_ted<double>(const join_view<double>& v, const ted_view& t, const work_item* items,
                        std::uint32_t n_items, const row_output& out, pass p,
                        const lbjoin::launch_config& config, cudaStream_t stream) {
  if (config.halving) {
    launch_pattern<true>(v, t, items, n_items, out, p, config, stream);
  } else {
    launch_pattern<false>(v, t, items, n_items, out, p, config, stream);
  }
}

template <>
void launch_prefix_norms<double>(const double* points, std::uint32_t n, int d, int checkpoints,
                                 double* norms, cudaStream_t stream) {
  if (n == 0) return;
  prefix_norms_kernel<double>
      <<<grid_size(n, 256), 256, 0, stream>>>(points, n, d, checkpoints, norms);
  EPSJOIN_CHECK_LAUNCH();
}

}  // namespace epsjoin::detail::ted
