#include "gpu/lbjoin/launch_tiled.cuh"

namespace epsjoin::detail::lbjoin {

template void launch_tiled<double>(const join_view<double>&, const work_item*, std::uint32_t,
                                const row_output&, pass, const kernel_launch&, cudaStream_t);

}  // namespace epsjoin::detail::lbjoin
