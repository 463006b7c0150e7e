#include "epsjoin/resources.hpp"

#include <string>
#include <thread>

namespace epsjoin {

#ifdef EPSJOIN_HAS_CUDA
namespace detail {
gpu_state& acquire_gpu(resources& res);  // src/gpu/gpu_state.cuh
std::string gpu_unavailable_reason(int device);
}  // namespace detail
#endif

bool resources::prepare_gpu() {
#ifdef EPSJOIN_HAS_CUDA
  if (!detail::gpu_unavailable_reason(device_).empty()) return false;
  detail::acquire_gpu(*this);
  return true;
#else
  return false;
#endif
}

resources::resources(unsigned threads, int device) : device_(device) { set_threads(threads); }
resources::~resources() = default;
resources::resources(resources&&) noexcept = default;
resources& resources::operator=(resources&&) noexcept = default;

void resources::set_threads(unsigned threads) noexcept {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  threads_ = threads == 0 ? 1 : threads;
}

void resources::set_gpu_state(detail::gpu_state* state, void (*deleter)(detail::gpu_state*)) {
  gpu_ = std::unique_ptr<detail::gpu_state, void (*)(detail::gpu_state*)>(state, deleter);
}

}  // namespace epsjoin
