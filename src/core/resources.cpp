#include "epsjoin/resources.hpp"

#include <stdexcept>
#include <string>
#include <thread>

#include "base/cuda_part.hpp"

namespace epsjoin {

std::optional<device_split> device_split_named(std::string_view text) noexcept {
  if (text == "auto") return device_split::automatic;
  if (text == "items") return device_split::work_items;
  if (text == "slabs") return device_split::slabs;
  return std::nullopt;
}

bool resources::prepare_gpu() {
  if (!detail::gpu_unavailable_reason(device_).empty()) return false;
  detail::prepare_gpu_state(*this);
  // Every device of a multi-device join, so that none pays for its context in the first join;
  // automatic, the others only once a join spreads (most joins do not: no context to pay for).
  for (std::size_t k = 1; k < devices_.size() && !devices_automatic_; ++k) {
    if (!detail::gpu_unavailable_reason(devices_[k]).empty()) return false;
    detail::prepare_gpu_state(peer(k));
  }
  return true;
}

resources::resources(unsigned threads, int device) : device_(device), devices_{device} {
  set_threads(threads);
}
resources::~resources() = default;
resources::resources(resources&&) noexcept = default;
resources& resources::operator=(resources&&) noexcept = default;

void resources::set_threads(unsigned threads) noexcept {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  threads_ = threads == 0 ? 1 : threads;
}

void resources::set_devices(std::vector<int> devices) {
  if (devices.empty()) throw std::invalid_argument("resources::set_devices: no device given");
  for (int device : devices) {
    if (device < 0) {
      throw std::invalid_argument("resources::set_devices: device ordinals are >= 0, got " +
                                  std::to_string(device));
    }
  }
  if (devices.front() != device_) gpu_.reset();  // its state belongs to the old first device
  device_ = devices.front();
  devices_ = std::move(devices);
  peers_.clear();
}

resources& resources::peer(std::size_t k) {
  if (k == 0 || k >= devices_.size()) {
    throw std::out_of_range("resources::peer: no device " + std::to_string(k));
  }
  if (peers_.size() < devices_.size() - 1) peers_.resize(devices_.size() - 1);
  auto& slot = peers_[k - 1];
  if (!slot) {
    slot = std::make_unique<resources>(threads_, devices_[k]);
    slot->set_memory(memory_);
  }
  return *slot;
}

void resources::set_gpu_state(detail::gpu_state* state, void (*deleter)(detail::gpu_state*)) {
  gpu_ = std::unique_ptr<detail::gpu_state, void (*)(detail::gpu_state*)>(state, deleter);
}

}  // namespace epsjoin
