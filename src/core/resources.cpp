#include "epsjoin/resources.hpp"

#include <thread>

namespace epsjoin {

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
