// brute-gpu: every query against every point, one thread per query (paper 001 sec. 5.2.4's
// baseline). No index; shares the batch engine with gpu-sj.

#include "base/cub_call.cuh"
#include "base/timer.hpp"
#include "batch/deliver.cuh"
#include "core/builtin_engines.hpp"

namespace epsjoin::detail {

namespace {

constexpr unsigned block = 256;

template <class In, class T>
__global__ void convert_kernel(const In* in, std::size_t n, T* out) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) out[k] = static_cast<T>(in[k]);
}

/// The points as T on the device: host points are copied over (counted in `h2d_bytes`), device
/// points copied or converted where they lie.
template <class T>
device_buffer<T> upload(dataset_view v, cudaStream_t stream, std::uint64_t& h2d_bytes) {
  const std::size_t n = v.n * v.d;
  device_buffer<T> out(std::max<std::size_t>(n, 1));
  if (n == 0) return out;
  const std::size_t in_bytes = n * size_of(v.type);
  if (!v.on_device()) h2d_bytes += in_bytes;
  if (v.type == (sizeof(T) == 8 ? scalar_type::f64 : scalar_type::f32)) {
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(out.data(), v.data, in_bytes, cudaMemcpyDefault, stream));
    return out;
  }
  device_buffer<unsigned char> raw;
  const void* in = v.data;
  if (!v.on_device()) {
    raw.reserve(in_bytes);
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(raw.data(), v.data, in_bytes, cudaMemcpyHostToDevice, stream));
    in = raw.data();
  }
  if (v.type == scalar_type::f64) {
    convert_kernel<<<grid_size(n, block), block, 0, stream>>>(static_cast<const double*>(in), n,
                                                              out.data());
  } else {
    convert_kernel<<<grid_size(n, block), block, 0, stream>>>(static_cast<const float*>(in), n,
                                                              out.data());
  }
  EPSJOIN_CHECK_LAUNCH();
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return out;
}

template <class T>
struct brute_view {
  const T* queries;
  const T* data;
  std::uint32_t n_data;
  int d;
  T eps2;
  bool self_join;
};

template <class T, emit_mode Mode>
__global__ void brute_gpu_kernel(brute_view<T> v, strided_batch batch, result_target out) {
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= batch.count) return;
  const auto i = static_cast<std::uint32_t>(batch.first + t * batch.stride);
  const T* q = v.queries + static_cast<std::size_t>(i) * v.d;
  for (std::uint32_t j = 0; j < v.n_data; ++j) {
    if (v.self_join && j == i) continue;
    if (within(q, v.data + static_cast<std::size_t>(j) * v.d, v.d, v.eps2)) {
      emit<Mode>(out, i, j, false);
    }
  }
}

template <class T>
void launch_brute(const brute_view<T>& v, const strided_batch& b, const result_target& t,
                  emit_mode mode, cudaStream_t s) {
  if (b.count == 0) return;
  const unsigned blocks = grid_size(b.count, block);
  with_emit_mode(mode, [&](auto m) {
    brute_gpu_kernel<T, decltype(m)::value><<<blocks, block, 0, s>>>(v, b, t);
  });
  EPSJOIN_CHECK_LAUNCH();
}

struct brute_gpu_params final : engine_params {};

class brute_gpu_engine final : public engine {
 public:
  std::string_view name() const override { return "brute-gpu"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override {
    return "every pair on the GPU, one thread per query (paper 001's baseline)";
  }
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  // Only the pair pipeline's batch sizes, which dispatch reads into the memory budget.
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    reader.memory_override("batch_pairs");
    reader.memory_override("batches");
    return std::make_unique<brute_gpu_params>();
  }

  void run(join_request& req) const override {
    with_precision(req.options.precision, [&]<class T>() { run_typed<T>(req); });
  }

 private:
  template <class T>
  void run_typed(join_request& req) const {
    gpu_state& gpu = acquire_gpu(req.res);
    cudaStream_t stream = gpu.slots[0]->stream.get();
    stopwatch clock;
    device_buffer<T> data = upload<T>(req.data, stream, req.stats.h2d_point_bytes);
    device_buffer<T> query_storage;
    if (!req.self_join) query_storage = upload<T>(req.queries, stream, req.stats.h2d_point_bytes);
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
    req.stats.add_stage("upload", clock.seconds());
    const T eps = static_cast<T>(req.options.eps);
    const brute_view<T> view{req.self_join ? data.data() : query_storage.data(),
                             data.data(),
                             static_cast<std::uint32_t>(req.data.n),
                             static_cast<int>(req.data.d),
                             eps * eps,
                             req.self_join};
    req.stats.candidates =
        req.self_join ? req.data.n * (req.data.n - 1) : req.queries.n * req.data.n;
    auto launch = [&](const strided_batch& b, const result_target& t, cudaStream_t s) {
      launch_brute(view, b, t, t.pairs != nullptr ? emit_mode::pairs : emit_mode::count_total, s);
    };
    auto count = [&](const strided_batch& b, const result_target& t, cudaStream_t s) {
      launch_brute(view, b, t, emit_mode::count_per_query, s);
    };
    deliver_gpu_results(req, gpu, req.queries.n, req.queries.n, launch, count);
  }
};

}  // namespace

std::unique_ptr<engine> make_brute_gpu_engine() { return std::make_unique<brute_gpu_engine>(); }

}  // namespace epsjoin::detail
