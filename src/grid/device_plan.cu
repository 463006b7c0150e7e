#include <algorithm>
#include <cfloat>
#include <vector>

#include "grid/device_plan.cuh"

namespace epsjoin::detail::grid {

namespace {

constexpr unsigned block = 256;

/// Per column (blockIdx.y) and slice of rows (blockIdx.x): min, max, and the sums of the values
/// shifted by the first point (as the host statistics shift them, for offset data).
template <class T>
__global__ void column_partials_kernel(const T* __restrict__ rows, std::size_t n, std::size_t d,
                                       std::size_t rows_per_slice, double* __restrict__ partials) {
  const std::size_t col = blockIdx.y;
  const std::size_t begin = blockIdx.x * rows_per_slice;
  const std::size_t end = min(n, begin + rows_per_slice);
  const double shift = static_cast<double>(rows[col]);
  double lo = DBL_MAX, hi = -DBL_MAX, sum = 0, sum2 = 0;
  for (std::size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const double x = static_cast<double>(rows[i * d + col]);
    lo = fmin(lo, x);
    hi = fmax(hi, x);
    const double y = x - shift;
    sum += y;
    sum2 += y * y;
  }
  __shared__ double s_lo[block], s_hi[block], s_sum[block], s_sum2[block];
  s_lo[threadIdx.x] = lo;
  s_hi[threadIdx.x] = hi;
  s_sum[threadIdx.x] = sum;
  s_sum2[threadIdx.x] = sum2;
  __syncthreads();
  for (unsigned half = block / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s_lo[threadIdx.x] = fmin(s_lo[threadIdx.x], s_lo[threadIdx.x + half]);
      s_hi[threadIdx.x] = fmax(s_hi[threadIdx.x], s_hi[threadIdx.x + half]);
      s_sum[threadIdx.x] += s_sum[threadIdx.x + half];
      s_sum2[threadIdx.x] += s_sum2[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double* out = partials + 4 * (col * gridDim.x + blockIdx.x);
    out[0] = s_lo[0];
    out[1] = s_hi[0];
    out[2] = s_sum[0];
    out[3] = s_sum2[0];
  }
}

}  // namespace

column_stats device_column_stats(gpu_state& gpu, cudaStream_t stream, dataset_view data) {
  (void)gpu;
  column_stats out;
  out.min.assign(data.d, 0.0);
  out.max.assign(data.d, 0.0);
  out.variance.assign(data.d, 0.0);
  if (data.n == 0 || data.d == 0) return out;
  EPSJOIN_EXPECTS(data.d <= 65535, "points in device memory have ", data.d,
                  " dimensions; at most 65535 are supported");
  // Enough slices to fill the device for few columns; a few thousand rows per thread at most.
  const std::size_t slices = std::clamp<std::size_t>(data.n / (block * 16), 1, 512);
  const std::size_t rows_per_slice = (data.n + slices - 1) / slices;
  device_buffer<double> partials(4 * slices * data.d);
  const dim3 grid(static_cast<unsigned>(slices), static_cast<unsigned>(data.d));
  if (data.type == scalar_type::f64) {
    column_partials_kernel<<<grid, block, 0, stream>>>(static_cast<const double*>(data.data),
                                                       data.n, data.d, rows_per_slice,
                                                       partials.data());
  } else {
    column_partials_kernel<<<grid, block, 0, stream>>>(static_cast<const float*>(data.data),
                                                       data.n, data.d, rows_per_slice,
                                                       partials.data());
  }
  EPSJOIN_CHECK_LAUNCH();
  std::vector<double> host;
  copy_to_host(host, partials.data(), 4 * slices * data.d, stream);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  const auto nn = static_cast<double>(data.n);
  for (std::size_t j = 0; j < data.d; ++j) {
    double lo = DBL_MAX, hi = -DBL_MAX, sum = 0, sum2 = 0;
    for (std::size_t s = 0; s < slices; ++s) {
      const double* p = host.data() + 4 * (j * slices + s);
      lo = std::min(lo, p[0]);
      hi = std::max(hi, p[1]);
      sum += p[2];
      sum2 += p[3];
    }
    out.min[j] = lo;
    out.max[j] = hi;
    const double mean = sum / nn;
    out.variance[j] = std::max(0.0, sum2 / nn - mean * mean);
  }
  return out;
}

grid_plan plan_grid_for(gpu_state& gpu, cudaStream_t stream, dataset_view data,
                        const plan_options& options, unsigned threads) {
  if (!data.on_device() || (options.max_k == 0 && !options.reorder)) {
    return plan_grid(data, options, threads);  // (which reads nothing in the second case)
  }
  return plan_grid(device_column_stats(gpu, stream, data), options);
}

}  // namespace epsjoin::detail::grid
