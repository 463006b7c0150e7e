#pragma once
// What the shards of a multi-device join (core/multi_device_join.hpp) share beside the caller's
// sink: one progress figure for the caller, and the first shard's resources given back as the
// caller set them.

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <vector>

#include "core/arrivals.hpp"
#include "epsjoin/resources.hpp"

namespace epsjoin::detail {

// The devices' progress as one figure for the caller (their mean), reported from one thread at
// a time; a throw from the caller's callback (Ctrl-C in Python) stops every device.
class shared_progress {
 public:
  shared_progress(std::function<void(double)> report, std::size_t parts)
      : report_(std::move(report)), parts_(parts, 0.0) {}

  std::function<void(double)> part(std::size_t k) {
    return [this, k](double f) {
      if (stopped_.load(std::memory_order_relaxed)) throw stopped_elsewhere{};
      if (!report_) return;
      std::lock_guard lock(mutex_);
      parts_[k] = std::clamp(f, 0.0, 1.0);
      double sum = 0;
      for (double p : parts_) sum += p;
      try {
        report_(sum / static_cast<double>(parts_.size()));
      } catch (...) {
        stop();
        throw;
      }
    };
  }
  void stop() noexcept { stopped_.store(true, std::memory_order_relaxed); }

 private:
  std::function<void(double)> report_;
  std::mutex mutex_;
  std::vector<double> parts_;
  std::atomic<bool> stopped_{false};
};

// Restores the caller's thread count and memory limits on the first shard's resources, which
// run with a share of both, however the join ends.
class settings_restorer {
 public:
  explicit settings_restorer(resources& res)
      : res_(res), threads_(res.threads()), memory_(res.memory()) {}
  ~settings_restorer() {
    res_.set_threads(threads_);
    res_.set_memory(memory_);
  }
  settings_restorer(const settings_restorer&) = delete;
  settings_restorer& operator=(const settings_restorer&) = delete;

 private:
  resources& res_;
  unsigned threads_;
  memory_limits memory_;
};

}  // namespace epsjoin::detail
