// gds-join's kernel in double: lbjoin's query kernel with the ILP distance test (distance.cuh).

#include "gpu/lbjoin/launch_query.cuh"

namespace epsjoin::detail::lbjoin {

template <>
void launch_gds<double>(const join_view<double>& v, const work_item* items, std::uint32_t n_items,
                        const row_output& out, pass p, const kernel_launch& config,
                        cudaStream_t stream) {
  launch_query_kernel<double, true>(v, items, n_items, out, p, config, stream);
}

}  // namespace epsjoin::detail::lbjoin
