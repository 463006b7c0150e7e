#pragma once
// The devices of a multi-device join meeting once, after they have counted and before they
// write (core/shard_table.hpp, core/range_rows.hpp): the last to arrive lays the caller's result
// out, and none writes before it is there. A device that fails or is stopped abandons the
// meeting, and those waiting for it stop instead of waiting forever.

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>

#include "base/expects.hpp"

namespace epsjoin::detail {

/// Thrown to a device that waits for the others, or reports its progress, once another device
/// failed or the caller stopped the join: the first failure is the one rethrown.
struct stopped_elsewhere {};

class arrivals {
 public:
  explicit arrivals(std::size_t devices) : waiting_for_(devices) {}

  /// Counts one device in. The last to arrive calls `lay_out()` under the lock (its exception,
  /// the sink refusing the result, is rethrown here and stops the others). With `wait`, returns
  /// once every device has arrived; throws stopped_elsewhere when one abandoned the meeting.
  template <class LayOut>
  void arrive(LayOut&& lay_out, bool wait) {
    std::unique_lock lock(mutex_);
    EPSJOIN_ENSURE(waiting_for_ > 0, error, "internal: more devices arrived than the join has");
    if (--waiting_for_ == 0 && !abandoned_) {
      std::exception_ptr failure;
      try {
        lay_out();
      } catch (...) {
        failure = std::current_exception();
        abandoned_ = true;
      }
      lock.unlock();
      all_arrived_.notify_all();
      if (failure) std::rethrow_exception(failure);
      lock.lock();
    }
    if (!wait) return;
    all_arrived_.wait(lock, [&] { return abandoned_ || waiting_for_ == 0; });
    if (abandoned_) throw stopped_elsewhere{};
  }

  /// A device failed or was stopped: the devices waiting for it throw stopped_elsewhere.
  void abandon() noexcept {
    {
      std::lock_guard lock(mutex_);
      abandoned_ = true;
    }
    all_arrived_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  std::size_t waiting_for_;
  bool abandoned_ = false;
};

}  // namespace epsjoin::detail
