#pragma once
// gds-join's kernel in the join's precision: the shared query kernel (gpu/agents/query_kernel.cuh)
// with the ILP distance test, each precision instantiated in its own translation unit.

#include <cstdint>

#include "gpu/agents/kernel_contract.cuh"

namespace epsjoin::detail::gds {

/// One pass of `lanes` lanes a query (1, 2, 4, 8, 16 or 32) over `items`.
template <class T>
void launch_gds(const row_join::join_view<T>& v, const row_join::work_item* items,
                std::uint32_t n_items, const row_join::row_output& out, row_join::pass p,
                const row_join::launch_config& config, unsigned lanes, cudaStream_t stream);

}  // namespace epsjoin::detail::gds
