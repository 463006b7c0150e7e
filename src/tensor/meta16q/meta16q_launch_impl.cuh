#pragma once
// The definitions behind meta16q_launch.cuh, instantiated once per precision in meta16q_f32.cu and
// meta16q_f64.cu.

#include <algorithm>

#include "base/cub_call.cuh"
#include "base/memory.cuh"
#include "tensor/meta16q/meta16q_launch.cuh"

namespace epsjoin::detail::meta16q {

namespace launch_detail {

template <class T, bool Halving, pass Pass, int RowBlocks>
void launch_shape(const join_view<T>& v, const meta_view& m, std::uint32_t n_data, query_span* span,
                  const row_output& out, cudaStream_t stream) {
  auto* kernel = meta_kernel<T, Halving, Pass, RowBlocks>;
  const std::size_t bytes = shared_bytes(v.d, RowBlocks);
  EPSJOIN_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  int per_sm = 0, device = 0, sms = 0;
  EPSJOIN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
  EPSJOIN_CUDA_TRY(cudaGetDevice(&device));
  EPSJOIN_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  kernel<<<std::max(per_sm, 1) * sms, threads, bytes, stream>>>(v, m, n_data, span, out);
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving, pass Pass>
void launch_pass(const join_view<T>& v, const meta_view& m, std::uint32_t n_data, query_span* span,
                 const row_output& out, int row_blocks, cudaStream_t stream) {
  if (row_blocks == 8) {
    launch_shape<T, Halving, Pass, 8>(v, m, n_data, span, out, stream);
  } else {
    launch_shape<T, Halving, Pass, 4>(v, m, n_data, span, out, stream);
  }
}

template <class T, bool Halving, pass Pass, int KSteps>
void launch_tiles_shape(const join_view<T>& v, const meta_view& m, const row_join::work_item* items,
                        std::uint32_t n_items, const row_output& out,
                        const row_join::launch_config& config, cudaStream_t stream) {
  const unsigned blocks = config.queue != nullptr ? config.persistent_blocks
                                                  : grid_size(n_items, row_join::warps_per_block);
  meta_tiles_kernel<T, Halving, Pass, KSteps>
      <<<blocks, row_join::block_threads, 0, stream>>>(v, m, items, n_items, config.queue, out);
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving, pass Pass>
void launch_tiles_pass(const join_view<T>& v, const meta_view& m, const row_join::work_item* items,
                       std::uint32_t n_items, const row_output& out,
                       const row_join::launch_config& config, cudaStream_t stream) {
  // The query fragments stay in registers up to 64 dimensions.
  const unsigned k_steps = fp16::padded_dims(v.d) / 16;
  if (k_steps <= 1) {
    launch_tiles_shape<T, Halving, Pass, 1>(v, m, items, n_items, out, config, stream);
  } else if (k_steps <= 2) {
    launch_tiles_shape<T, Halving, Pass, 2>(v, m, items, n_items, out, config, stream);
  } else if (k_steps <= 4) {
    launch_tiles_shape<T, Halving, Pass, 4>(v, m, items, n_items, out, config, stream);
  } else {
    launch_tiles_shape<T, Halving, Pass, 0>(v, m, items, n_items, out, config, stream);
  }
}

}  // namespace launch_detail

template <class T>
void launch_meta_tiles(const join_view<T>& v, const meta_view& m, const row_join::work_item* items,
                       std::uint32_t n_items, const row_output& out, pass p,
                       const row_join::launch_config& config, cudaStream_t stream) {
  if (n_items == 0) return;
  using launch_detail::launch_tiles_pass;
  if (config.halving) {
    if (p == pass::count) {
      launch_tiles_pass<T, true, pass::count>(v, m, items, n_items, out, config, stream);
    } else {
      launch_tiles_pass<T, true, pass::fill>(v, m, items, n_items, out, config, stream);
    }
  } else if (p == pass::count) {
    launch_tiles_pass<T, false, pass::count>(v, m, items, n_items, out, config, stream);
  } else {
    launch_tiles_pass<T, false, pass::fill>(v, m, items, n_items, out, config, stream);
  }
}

template <class T>
void launch_meta(const join_view<T>& v, const meta_view& m, std::uint32_t n_data,
                 const row_join::work_item* items, std::uint32_t n_items, const row_output& out,
                 pass p, bool halving, int row_blocks, cudaStream_t stream) {
  if (n_items == 0) return;
  // Per launch and stream-ordered: segments may be filled on several streams at once.
  stream_scratch<query_span> span(1, stream);
  agents::start_query_span(span.data(), items, n_items, stream);
  using launch_detail::launch_pass;
  if (halving) {
    if (p == pass::count) {
      launch_pass<T, true, pass::count>(v, m, n_data, span.data(), out, row_blocks, stream);
    } else {
      launch_pass<T, true, pass::fill>(v, m, n_data, span.data(), out, row_blocks, stream);
    }
  } else if (p == pass::count) {
    launch_pass<T, false, pass::count>(v, m, n_data, span.data(), out, row_blocks, stream);
  } else {
    launch_pass<T, false, pass::fill>(v, m, n_data, span.data(), out, row_blocks, stream);
  }
}

}  // namespace epsjoin::detail::meta16q
