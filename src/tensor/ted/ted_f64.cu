// ted-join's kernels in double (see ted_launch_impl.cuh).

#include "tensor/ted/ted_launch_impl.cuh"

namespace epsjoin::detail::ted {

template void launch_ted<double>(const join_view<double>&, const ted_view&, const work_item*,
                                 std::uint32_t, const row_output&, pass,
                                 const row_join::launch_config&, cudaStream_t);
template void launch_ted_gemm<double>(const join_view<double>&, const ted_view&, std::uint32_t,
                                      const work_item*, std::uint32_t, const row_output&, pass,
                                      bool, gemm::mma_shape, cudaStream_t);
template void launch_prefix_norms<double>(const double*, std::uint32_t, int, int, double*,
                                          cudaStream_t);

}  // namespace epsjoin::detail::ted
