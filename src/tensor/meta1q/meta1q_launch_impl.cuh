#pragma once
// The definitions behind meta1q_launch.cuh, instantiated once per precision in meta1q_f32.cu and
// meta1q_f64.cu.

#include "gpu/cub_call.cuh"
#include "gpu/gds/half_kernel.cuh"
#include "tensor/meta1q/meta1q_kernel.cuh"
#include "tensor/meta1q/meta1q_launch.cuh"

namespace epsjoin::detail::meta1q {

namespace direct_detail {

template <class T, bool Halving, pass Pass, bool HalfSums, int KSteps>
void launch_meta_1q(const join_view<T>& v, const fp16::direct_view& m,
                    const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                    unsigned blocks, const row_join::launch_config& config, cudaStream_t stream) {
  meta_1q_kernel<T, Halving, Pass, HalfSums, KSteps>
      <<<blocks, row_join::block_threads, 0, stream>>>(v, m, items, n_items, config.queue, out);
}

template <class T, bool Halving, pass Pass, bool HalfSums>
void launch_shape(const join_view<T>& v, const fp16::direct_view& m,
                  const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                  const row_join::launch_config& config, const direct_kernel& kernel,
                  cudaStream_t stream) {
  const unsigned per_item = kernel.tensor_cores ? 32 : kernel.lanes;
  const unsigned blocks =
      config.queue != nullptr
          ? config.persistent_blocks
          : grid_size(static_cast<std::uint64_t>(n_items) * per_item, row_join::block_threads);
  if (kernel.tensor_cores) {
    // The candidates' fragments stay in registers up to 64 dimensions.
    const unsigned k_steps = fp16::padded_dims(v.d) / 16;
    if (k_steps <= 1) {
      launch_meta_1q<T, Halving, Pass, HalfSums, 1>(v, m, items, n_items, out, blocks, config,
                                                    stream);
    } else if (k_steps <= 2) {
      launch_meta_1q<T, Halving, Pass, HalfSums, 2>(v, m, items, n_items, out, blocks, config,
                                                    stream);
    } else if (k_steps <= 4) {
      launch_meta_1q<T, Halving, Pass, HalfSums, 4>(v, m, items, n_items, out, blocks, config,
                                                    stream);
    } else {
      launch_meta_1q<T, Halving, Pass, HalfSums, 0>(v, m, items, n_items, out, blocks, config,
                                                    stream);
    }
  } else {
    gds::half_query_kernel<T, Halving, Pass, HalfSums>
        <<<blocks, row_join::block_threads, 0, stream>>>(v, m, items, n_items, config.queue, out,
                                                         kernel.lanes);
  }
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving, pass Pass>
void launch_sums(const join_view<T>& v, const fp16::direct_view& m,
                 const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                 const row_join::launch_config& config, const direct_kernel& kernel,
                 cudaStream_t stream) {
  if (kernel.half_sums) {
    launch_shape<T, Halving, Pass, true>(v, m, items, n_items, out, config, kernel, stream);
  } else {
    launch_shape<T, Halving, Pass, false>(v, m, items, n_items, out, config, kernel, stream);
  }
}

}  // namespace direct_detail

template <class T>
void launch_direct(const join_view<T>& v, const fp16::direct_view& m,
                   const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                   pass p, const row_join::launch_config& config, const direct_kernel& kernel,
                   cudaStream_t stream) {
  if (n_items == 0) return;
  using direct_detail::launch_sums;
  if (config.halving) {
    if (p == pass::count) {
      launch_sums<T, true, pass::count>(v, m, items, n_items, out, config, kernel, stream);
    } else {
      launch_sums<T, true, pass::fill>(v, m, items, n_items, out, config, kernel, stream);
    }
  } else if (p == pass::count) {
    launch_sums<T, false, pass::count>(v, m, items, n_items, out, config, kernel, stream);
  } else {
    launch_sums<T, false, pass::fill>(v, m, items, n_items, out, config, kernel, stream);
  }
}

}  // namespace epsjoin::detail::meta1q
