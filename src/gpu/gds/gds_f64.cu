// gds-join's kernel in double: the query kernel with the ILP distance test (gpu/agents/).

#include "gpu/agents/launch_query.cuh"
#include "gpu/gds/launch.cuh"

namespace epsjoin::detail::gds {

template <>
void launch_gds<double>(const row_join::join_view<double>& v, const row_join::work_item* items,
                    std::uint32_t n_items, const row_join::row_output& out, row_join::pass p,
                    const row_join::launch_config& config, unsigned lanes, cudaStream_t stream) {
  agents::launch_query_kernel<double, true>(v, items, n_items, out, p, config, lanes, stream);
}

}  // namespace epsjoin::detail::gds
