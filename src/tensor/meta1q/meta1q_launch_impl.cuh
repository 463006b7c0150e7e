#pragma once
// The definitions behind meta1q_launch.cuh, instantiated once per precision in meta1q_f32.cu and
// meta1q_f64.cu.

#include "base/cub_call.cuh"
#include "tensor/meta1q/meta1q_kernel.cuh"
#include "tensor/meta1q/meta1q_launch.cuh"

namespace epsjoin::detail::meta1q {

namespace launch_detail {

template <class T, bool Halving, pass Pass, bool HalfSums, int KSteps>
void launch_meta1q_kernel(const join_view<T>& v, const fp16::direct_view& m,
                          const row_join::work_item* items, std::uint32_t n_items,
                          const row_output& out, unsigned blocks,
                          const row_join::launch_config& config, cudaStream_t stream) {
  meta1q_kernel<T, Halving, Pass, HalfSums, KSteps>
      <<<blocks, row_join::block_threads, 0, stream>>>(v, m, items, n_items, config.queue, out);
}

}  // namespace launch_detail

template <class T>
void launch_meta1q(const join_view<T>& v, const fp16::direct_view& m,
                   const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                   pass p, const row_join::launch_config& config, const fp16::direct_kernel& kernel,
                   cudaStream_t stream) {
  if (n_items == 0) return;
  // A warp per item.
  const unsigned blocks =
      config.queue != nullptr
          ? config.persistent_blocks
          : grid_size(static_cast<std::uint64_t>(n_items) * 32, row_join::block_threads);
  fp16::dispatch_direct(config.halving, p, kernel.half_sums,
                        [&]<bool Halving, pass Pass, bool HalfSums>() {
                          using launch_detail::launch_meta1q_kernel;
                          // The candidates' fragments stay in registers up to 64 dimensions.
                          const unsigned k_steps = fp16::padded_dims(v.d) / 16;
                          if (k_steps <= 1) {
                            launch_meta1q_kernel<T, Halving, Pass, HalfSums, 1>(
                                v, m, items, n_items, out, blocks, config, stream);
                          } else if (k_steps <= 2) {
                            launch_meta1q_kernel<T, Halving, Pass, HalfSums, 2>(
                                v, m, items, n_items, out, blocks, config, stream);
                          } else if (k_steps <= 4) {
                            launch_meta1q_kernel<T, Halving, Pass, HalfSums, 4>(
                                v, m, items, n_items, out, blocks, config, stream);
                          } else {
                            launch_meta1q_kernel<T, Halving, Pass, HalfSums, 0>(
                                v, m, items, n_items, out, blocks, config, stream);
                          }
                          EPSJOIN_CHECK_LAUNCH();
                        });
}

}  // namespace epsjoin::detail::meta1q
