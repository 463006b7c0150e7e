// meta-1q's kernel in double (see meta1q_launch_impl.cuh).

#include "tensor/meta1q/meta1q_launch_impl.cuh"

namespace epsjoin::detail::meta1q {

template void launch_meta1q<double>(const join_view<double>&, const fp16::direct_view&,
                                    const row_join::work_item*, std::uint32_t, const row_output&,
                                    pass, const row_join::launch_config&,
                                    const fp16::direct_kernel&, cudaStream_t);

}  // namespace epsjoin::detail::meta1q
