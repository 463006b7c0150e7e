// lbjoin's launch of the query kernel, both precisions (gpu/agents/launch_query.cuh).

#include "gpu/agents/launch_query.cuh"
#include "gpu/lbjoin/launch.cuh"

namespace epsjoin::detail::lbjoin {

template <class T>
void launch_query(const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                  const row_output& out, pass p, const kernel_launch& config, cudaStream_t stream) {
  agents::launch_query_kernel<T, false>(v, items, n_items, out, p, config, config.lanes, stream);
}

template void launch_query<float>(const join_view<float>&, const work_item*, std::uint32_t,
                                  const row_output&, pass, const kernel_launch&, cudaStream_t);
template void launch_query<double>(const join_view<double>&, const work_item*, std::uint32_t,
                                   const row_output&, pass, const kernel_launch&, cudaStream_t);

}  // namespace epsjoin::detail::lbjoin
