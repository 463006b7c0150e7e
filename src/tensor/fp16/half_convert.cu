// The conversion into FP16 copies (half_convert.cuh), in both precisions.

#include "base/cub_call.cuh"
#include "base/memory.cuh"
#include "tensor/fp16/half_convert.cuh"

namespace epsjoin::detail::fp16 {

template <class T>
void launch_to_half(const T* points, std::uint32_t n, int d, const double* center,
                    double half_scale, __half* out, float2* norms, cudaStream_t stream) {
  if (n == 0) return;
  to_half_kernel<T>
      <<<grid_size(n, 256), 256, 0, stream>>>(points, n, d, center, half_scale, out, norms);
  EPSJOIN_CHECK_LAUNCH();
}

template void launch_to_half<float>(const float*, std::uint32_t, int, const double*, double,
                                    __half*, float2*, cudaStream_t);
template void launch_to_half<double>(const double*, std::uint32_t, int, const double*, double,
                                     __half*, float2*, cudaStream_t);

}  // namespace epsjoin::detail::fp16
