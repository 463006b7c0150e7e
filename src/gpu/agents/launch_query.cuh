#pragma once
// Instantiation of the query kernel (query_kernel.cuh) over its lanes per query and pattern;
// Ilp selects gds-join's distance test. Included by the one translation unit a precision of each
// engine that launches it (lbjoin's query.cu, gds-join's gds_f32.cu and gds_f64.cu).

#include "base/cub_call.cuh"
#include "gpu/agents/query_kernel.cuh"

namespace epsjoin::detail::agents {

using row_join::launch_config;

template <class T, unsigned K, bool Halving, bool Ilp>
void launch_query_lanes(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                        const row_output& out, pass p, const launch_config& config,
                        cudaStream_t stream) {
  const std::uint64_t threads = static_cast<std::uint64_t>(n_items) * K;
  const unsigned blocks =
      config.queue != nullptr ? config.persistent_blocks : grid_size(threads, block_threads);
  if (p == pass::count) {
    query_kernel<T, K, Halving, pass::count, Ilp>
        <<<blocks, block_threads, 0, stream>>>(v, items, n_items, config.queue, out);
  } else {
    query_kernel<T, K, Halving, pass::fill, Ilp>
        <<<blocks, block_threads, 0, stream>>>(v, items, n_items, config.queue, out);
  }
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving, bool Ilp>
void launch_query_pattern(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                          const row_output& out, pass p, const launch_config& config,
                          unsigned lanes, cudaStream_t stream) {
  switch (lanes) {
    case 1:
      return launch_query_lanes<T, 1, Halving, Ilp>(v, items, n_items, out, p, config, stream);
    case 2:
      return launch_query_lanes<T, 2, Halving, Ilp>(v, items, n_items, out, p, config, stream);
    case 4:
      return launch_query_lanes<T, 4, Halving, Ilp>(v, items, n_items, out, p, config, stream);
    case 8:
      return launch_query_lanes<T, 8, Halving, Ilp>(v, items, n_items, out, p, config, stream);
    case 16:
      return launch_query_lanes<T, 16, Halving, Ilp>(v, items, n_items, out, p, config, stream);
    default:
      return launch_query_lanes<T, 32, Halving, Ilp>(v, items, n_items, out, p, config, stream);
  }
}

/// lanes: 1, 2, 4, 8, 16 or 32 a query (anything else runs 32).
template <class T, bool Ilp>
void launch_query_kernel(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                         const row_output& out, pass p, const launch_config& config,
                         unsigned lanes, cudaStream_t stream) {
  if (config.halving) {
    launch_query_pattern<T, true, Ilp>(v, items, n_items, out, p, config, lanes, stream);
  } else {
    launch_query_pattern<T, false, Ilp>(v, items, n_items, out, p, config, lanes, stream);
  }
}

}  // namespace epsjoin::detail::agents
