// Instantiation of the query kernel over its lanes per query (see launch.cuh).

#include "gpu/cub_call.cuh"
#include "gpu/lbjoin/launch.cuh"

namespace epsjoin::detail::lbjoin {

namespace {

template <class T, unsigned K, bool Halving>
void launch_query_lanes(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                        const row_output& out, pass p, const launch_config& config,
                        cudaStream_t stream) {
  const std::uint64_t threads = static_cast<std::uint64_t>(n_items) * K;
  const unsigned blocks = config.queue != nullptr ? config.persistent_blocks
                                                  : grid_size(threads, block_threads);
  if (p == pass::count) {
    query_kernel<T, K, Halving, pass::count>
        <<<blocks, block_threads, 0, stream>>>(v, items, n_items, config.queue, out);
  } else {
    query_kernel<T, K, Halving, pass::fill>
        <<<blocks, block_threads, 0, stream>>>(v, items, n_items, config.queue, out);
  }
  EPSJOIN_CHECK_LAUNCH();
}

template <class T, bool Halving>
void launch_query_pattern(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                          const row_output& out, pass p, const launch_config& config,
                          cudaStream_t stream) {
  switch (config.lanes) {
    case 1: return launch_query_lanes<T, 1, Halving>(v, items, n_items, out, p, config, stream);
    case 2: return launch_query_lanes<T, 2, Halving>(v, items, n_items, out, p, config, stream);
    case 4: return launch_query_lanes<T, 4, Halving>(v, items, n_items, out, p, config, stream);
    case 8: return launch_query_lanes<T, 8, Halving>(v, items, n_items, out, p, config, stream);
    case 16: return launch_query_lanes<T, 16, Halving>(v, items, n_items, out, p, config, stream);
    default: return launch_query_lanes<T, 32, Halving>(v, items, n_items, out, p, config, stream);
  }
}

}  // namespace

template <class T>
void launch_query(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                  const row_output& out, pass p, const launch_config& config, cudaStream_t stream) {
  if (config.halving) {
    launch_query_pattern<T, true>(v, items, n_items, out, p, config, stream);
  } else {
    launch_query_pattern<T, false>(v, items, n_items, out, p, config, stream);
  }
}

template void launch_query<float>(const join_view<float>&, const work_item*, std::uint32_t,
                                  const row_output&, pass, const launch_config&, cudaStream_t);
template void launch_query<double>(const join_view<double>&, const work_item*, std::uint32_t,
                                   const row_output&, pass, const launch_config&, cudaStream_t);

}  // namespace epsjoin::detail::lbjoin
