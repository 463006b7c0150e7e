#pragma once
// The definitions behind ted_launch.cuh, instantiated once per precision in ted_f32.cu and
// ted_f64.cu (the kernels are large: two translation units build in parallel).

#include <algorithm>

#include "base/cub_call.cuh"
#include "tensor/ted/ted_launch.cuh"

namespace epsjoin::detail::ted {

namespace launch_detail {

template <class T, int ColBlocks, bool Halving, bool Wide = false>
void launch_shape(const join_view<T>& v, const ted_view& t, const work_item* items,
                  std::uint32_t n_items, const row_output& out, pass p,
                  const row_join::launch_config& config, cudaStream_t stream) {
  const unsigned blocks =
      config.queue != nullptr ? config.persistent_blocks : grid_size(n_items, warps_per_block);
  if (p == pass::count) {
    ted_kernel<T, ColBlocks, Halving, pass::count, Wide>
        <<<blocks, block_threads, 0, stream>>>(v, t, items, n_items, config.queue, out);
  } else {
    ted_kernel<T, ColBlocks, Halving, pass::fill, Wide>
        <<<blocks, block_threads, 0, stream>>>(v, t, items, n_items, config.queue, out);
  }
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving>
void launch_pattern(const join_view<T>& v, const ted_view& t, const work_item* items,
                    std::uint32_t n_items, const row_output& out, pass p,
                    const row_join::launch_config& config, cudaStream_t stream) {
  if (t.col_blocks == 4) {
    launch_shape<T, 4, Halving>(v, t, items, n_items, out, p, config, stream);
  } else if (t.wide_mma) {  // only with the default 16 columns: it doubles no other kernel
    launch_shape<T, 2, Halving, true>(v, t, items, n_items, out, p, config, stream);
  } else {
    launch_shape<T, 2, Halving>(v, t, items, n_items, out, p, config, stream);
  }
}

template <class T, bool Halving, pass Pass, gemm::mma_shape Shape>
void launch_gemm_shape(const join_view<T>& v, const ted_view& t, std::uint32_t n_data,
                       gemm::query_span* span, const row_output& out, cudaStream_t stream) {
  auto* kernel = gemm::gemm_kernel<T, Halving, Pass, Shape>;
  const std::size_t bytes = gemm::shared_bytes<T>(v.d);
  EPSJOIN_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  int per_sm = 0, device = 0, sms = 0;
  EPSJOIN_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, gemm::threads, bytes));
  EPSJOIN_CUDA_TRY(cudaGetDevice(&device));
  EPSJOIN_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  kernel<<<std::max(per_sm, 1) * sms, gemm::threads, bytes, stream>>>(v, t, n_data, span, out);
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving, pass Pass>
void launch_gemm(const join_view<T>& v, const ted_view& t, std::uint32_t n_data,
                 gemm::query_span* span, const row_output& out, gemm::mma_shape shape,
                 cudaStream_t stream) {
  using gemm::mma_shape;
  switch (shape) {
    case mma_shape::m8n8k4:
      return launch_gemm_shape<T, Halving, Pass, mma_shape::m8n8k4>(v, t, n_data, span, out,
                                                                    stream);
    case mma_shape::m16n8k4:
      return launch_gemm_shape<T, Halving, Pass, mma_shape::m16n8k4>(v, t, n_data, span, out,
                                                                     stream);
    case mma_shape::m16n8k8:
      return launch_gemm_shape<T, Halving, Pass, mma_shape::m16n8k8>(v, t, n_data, span, out,
                                                                     stream);
    case mma_shape::m16n8k16:
      return launch_gemm_shape<T, Halving, Pass, mma_shape::m16n8k16>(v, t, n_data, span, out,
                                                                      stream);
  }
}

}  // namespace launch_detail

template <class T>
void launch_ted(const join_view<T>& v, const ted_view& t, const work_item* items,
                std::uint32_t n_items, const row_output& out, pass p,
                const row_join::launch_config& config, cudaStream_t stream) {
  if (config.halving) {
    launch_detail::launch_pattern<T, true>(v, t, items, n_items, out, p, config, stream);
  } else {
    launch_detail::launch_pattern<T, false>(v, t, items, n_items, out, p, config, stream);
  }
}

template <class T>
void launch_ted_gemm(const join_view<T>& v, const ted_view& t, std::uint32_t n_data,
                     const work_item* items, std::uint32_t n_items, const row_output& out, pass p,
                     bool halving, gemm::mma_shape shape, cudaStream_t stream) {
  if (n_items == 0) return;
  // Per launch and stream-ordered: segments may be filled on several streams at once.
  stream_scratch<gemm::query_span> span(1, stream);
  agents::start_query_span(span.data(), items, n_items, stream);
  using launch_detail::launch_gemm;
  if (halving) {
    if (p == pass::count) {
      launch_gemm<T, true, pass::count>(v, t, n_data, span.data(), out, shape, stream);
    } else {
      launch_gemm<T, true, pass::fill>(v, t, n_data, span.data(), out, shape, stream);
    }
  } else if (p == pass::count) {
    launch_gemm<T, false, pass::count>(v, t, n_data, span.data(), out, shape, stream);
  } else {
    launch_gemm<T, false, pass::fill>(v, t, n_data, span.data(), out, shape, stream);
  }
}

template <class T>
void launch_prefix_norms(const T* points, std::uint32_t n, int d, int checkpoints, double* norms,
                         cudaStream_t stream) {
  if (n == 0) return;
  prefix_norms_kernel<T><<<grid_size(n, 256), 256, 0, stream>>>(points, n, d, checkpoints, norms);
  EPSJOIN_CHECK_LAUNCH();
}

}  // namespace epsjoin::detail::ted
