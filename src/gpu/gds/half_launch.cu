// gds-join's FP16 kernel launched (half_launch.cuh), in both precisions.

#include "base/cub_call.cuh"
#include "gpu/gds/half_kernel.cuh"
#include "gpu/gds/half_launch.cuh"

namespace epsjoin::detail::gds {

template <class T>
void launch_half_query(const join_view<T>& v, const fp16::direct_view& m, const work_item* items,
                       std::uint32_t n_items, const row_output& out, pass p,
                       const row_join::launch_config& config, const fp16::direct_kernel& kernel,
                       cudaStream_t stream) {
  if (n_items == 0) return;
  const unsigned blocks =
      config.queue != nullptr
          ? config.persistent_blocks
          : grid_size(static_cast<std::uint64_t>(n_items) * kernel.lanes, block_threads);
  fp16::dispatch_direct(
      config.halving, p, kernel.half_sums, [&]<bool Halving, pass Pass, bool HalfSums>() {
        half_query_kernel<T, Halving, Pass, HalfSums><<<blocks, block_threads, 0, stream>>>(
            v, m, items, n_items, config.queue, out, kernel.lanes);
        EPSJOIN_CHECK_LAUNCH();
      });
}

template void launch_half_query<float>(const join_view<float>&, const fp16::direct_view&,
                                       const work_item*, std::uint32_t, const row_output&, pass,
                                       const row_join::launch_config&, const fp16::direct_kernel&,
                                       cudaStream_t);
template void launch_half_query<double>(const join_view<double>&, const fp16::direct_view&,
                                        const work_item*, std::uint32_t, const row_output&, pass,
                                        const row_join::launch_config&, const fp16::direct_kernel&,
                                        cudaStream_t);

}  // namespace epsjoin::detail::gds
