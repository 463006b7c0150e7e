// meta-16q's kernels in float (see meta16q_launch_impl.cuh).

#include "tensor/meta16q/meta16q_launch_impl.cuh"

namespace epsjoin::detail::meta16q {

template void launch_meta<float>(const join_view<float>&, const meta_view&, std::uint32_t,
                                 const row_join::work_item*, std::uint32_t, const row_output&, pass,
                                 bool, int, cudaStream_t);
template void launch_meta_tiles<float>(const join_view<float>&, const meta_view&,
                                       const row_join::work_item*, std::uint32_t, const row_output&,
                                       pass, const row_join::launch_config&, cudaStream_t);

}  // namespace epsjoin::detail::meta16q
