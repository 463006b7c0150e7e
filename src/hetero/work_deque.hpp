#pragma once
// hegjoin's shared work deque (dissertation ch. 4): the work items of a join, sorted by
// non-increasing workload, handed out from both ends until the ends meet. The GPU side takes
// batches from the heavy front, the CPU threads chunks from the light back, so the device gets
// the items it is fastest at and the cores the ones they finish quickly, and the two sides end
// together whatever their relative speed. Every item is handed out exactly once.
//
// Lock-free: both ends live in one 64-bit word (front in the high half, back in the low), so a
// take is one compare-and-swap of the pair and the two ends can never cross.

#include <atomic>
#include <cstdint>

#include "base/expects.hpp"

namespace epsjoin::detail::hetero {

/// Items [begin, end) handed to one taker; empty when the deque ran out.
struct item_range {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  bool empty() const noexcept { return begin == end; }
  std::uint32_t size() const noexcept { return end - begin; }
};

class work_deque {
 public:
  /// Items 0 .. n - 1, heaviest first.
  explicit work_deque(std::uint32_t n) : ends_(pack(0, n)) {}

  work_deque(const work_deque&) = delete;
  work_deque& operator=(const work_deque&) = delete;

  /// Up to `k` of the heaviest items left (k >= 1).
  item_range take_front(std::uint32_t k) {
    EPSJOIN_EXPECTS(k > 0, "a deque take needs k >= 1");
    std::uint64_t seen = ends_.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint32_t front = front_of(seen), back = back_of(seen);
      if (front >= back) return {front, front};
      const std::uint32_t end = back - front > k ? front + k : back;
      if (ends_.compare_exchange_weak(seen, pack(end, back), std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
        return {front, end};
      }
    }
  }

  /// Up to `k` of the lightest items left (k >= 1).
  item_range take_back(std::uint32_t k) {
    EPSJOIN_EXPECTS(k > 0, "a deque take needs k >= 1");
    std::uint64_t seen = ends_.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint32_t front = front_of(seen), back = back_of(seen);
      if (front >= back) return {back, back};
      const std::uint32_t begin = back - front > k ? back - k : front;
      if (ends_.compare_exchange_weak(seen, pack(front, begin), std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
        return {begin, back};
      }
    }
  }

  /// The items not yet handed out, [front, back) (a snapshot of both ends at once).
  item_range left() const noexcept {
    const std::uint64_t now = ends_.load(std::memory_order_acquire);
    return {front_of(now), back_of(now)};
  }

  /// Items not yet handed out (a snapshot).
  std::uint32_t remaining() const noexcept { return left().size(); }

  /// Where the front stands: the items before it went to the front's takers (a snapshot; once
  /// the deque is empty, the split between the two sides).
  std::uint32_t front() const noexcept { return front_of(ends_.load(std::memory_order_acquire)); }

 private:
  static constexpr std::uint64_t pack(std::uint32_t front, std::uint32_t back) noexcept {
    return (static_cast<std::uint64_t>(front) << 32) | back;
  }
  static constexpr std::uint32_t front_of(std::uint64_t ends) noexcept {
    return static_cast<std::uint32_t>(ends >> 32);
  }
  static constexpr std::uint32_t back_of(std::uint64_t ends) noexcept {
    return static_cast<std::uint32_t>(ends);
  }

  std::atomic<std::uint64_t> ends_;
};

}  // namespace epsjoin::detail::hetero
