#include "core/builtin_engines.hpp"
#include "core/engine.hpp"

namespace epsjoin::detail {

namespace {

// Explicit list rather than self-registering statics: a static library drops object files
// nothing refers to, and their registrations with them.
std::vector<std::unique_ptr<engine>> make_registry() {
  std::vector<std::unique_ptr<engine>> list;
  list.push_back(make_brute_cpu_engine());
  list.push_back(make_cpu_grid_engine());
  list.push_back(make_cpu_rtree_engine());
  list.push_back(make_super_ego_engine());
#ifdef EPSJOIN_HAS_CUDA
  list.push_back(make_gpu_sj_engine());
  list.push_back(make_brute_gpu_engine());
  list.push_back(make_lbjoin_engine());
  list.push_back(make_gds_join_engine());
  list.push_back(make_ted_join_engine());
  list.push_back(make_hegjoin_engine());
  list.push_back(make_meta_16q_engine());
  list.push_back(make_meta_1q_engine());
#ifdef EPSJOIN_EXPERIMENT_CUDA_TENSOR
  list.push_back(make_cuda_tensor_engine());  // experiments/cuda_tensor (EPSJOIN_EXPERIMENTS)
#endif
#else
  const char* no_cuda = EPSJOIN_NO_CUDA_REASON;
  list.push_back(make_unavailable_engine("gpu-sj", "gpu", "GPU-SJ (paper 001)", no_cuda));
  list.push_back(make_unavailable_engine("brute-gpu", "gpu", "every pair on the GPU", no_cuda));
  list.push_back(make_unavailable_engine("lbjoin", "gpu", "load-balanced GPU join (ch. 3)", no_cuda));
  list.push_back(make_unavailable_engine("gds-join", "gpu", "high-dimensional CUDA-core join", no_cuda));
  list.push_back(make_unavailable_engine("ted-join", "gpu", "FP64 tensor-core join (ch. 5)", no_cuda));
  list.push_back(make_unavailable_engine("hegjoin", "cpu+gpu", "GPU and CPU together (ch. 4)", no_cuda));
  list.push_back(make_unavailable_engine("meta-16q", "tensor", "FP16-FP32 tensor-core join (ch. 6)", no_cuda));
  list.push_back(make_unavailable_engine("meta-1q", "tensor", "FP16 direct-formula tensor-core join (ch. 6)", no_cuda));
#endif
  return list;
}

}  // namespace

const std::vector<std::unique_ptr<engine>>& registered_engines() {
  static const std::vector<std::unique_ptr<engine>> registry = make_registry();
  return registry;
}

const engine* find_engine(std::string_view name) {
  for (const auto& e : registered_engines()) {
    if (e->name() == name) return e.get();
  }
  return nullptr;
}

}  // namespace epsjoin::detail
