#include "cuda_tensor/fused_blocks_impl.cuh"

namespace epsjoin::detail::hetero {

template void launch_fused_blocks<float>(const row_join::join_view<float>&, const meta16q::meta_view&,
                                        const row_join::work_item*, std::uint32_t,
                                        const row_join::work_item*, std::uint32_t,
                                        const row_join::row_output&, row_join::pass, unsigned, block_order,
                                        side_clocks*, cudaStream_t);

}  // namespace epsjoin::detail::hetero
