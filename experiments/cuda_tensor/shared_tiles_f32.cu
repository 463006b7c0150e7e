#include "cuda_tensor/shared_tiles_impl.cuh"

namespace epsjoin::detail::hetero {

template void launch_shared_tiles<float>(const row_join::join_view<float>&,
                                         const meta16q::meta_view&, const row_join::work_item*,
                                         const std::uint32_t*, std::uint32_t, unsigned,
                                         const row_join::row_output&, row_join::pass, unsigned,
                                         side_clocks*, cudaStream_t);

}  // namespace epsjoin::detail::hetero
