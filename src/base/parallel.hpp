#pragma once
// A dynamically scheduled parallel loop over [0, n) on plain std::threads.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "base/cancellation.hpp"
#include "base/thread_pool.hpp"
#include "base/timer.hpp"

namespace epsjoin::detail {

/// How many of a parallel_for's workers other than the caller are inside the loop, so that the
/// caller, done with its own chunks, can keep reporting progress until they are done.
class others_running {
 public:
  void enter() {
    std::lock_guard lock(mutex_);
    ++running_;
  }
  void leave() {
    {
      std::lock_guard lock(mutex_);
      --running_;
    }
    none_.notify_all();
  }
  /// Returns once no other worker is inside the loop, or `failed` is set; `poll()` every 50 ms
  /// meanwhile (what it throws, this throws).
  template <class Poll>
  void wait_until_none(const std::atomic<bool>& failed, Poll&& poll) {
    std::unique_lock lock(mutex_);
    while (running_ > 0 && !failed.load(std::memory_order_relaxed)) {
      if (!none_.wait_for(lock, std::chrono::milliseconds(50), [&] { return running_ == 0; })) {
        lock.unlock();
        poll();
        lock.lock();
      }
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable none_;
  unsigned running_ = 0;
};

/// Calls body(begin, end, worker) on chunks of `grain` items taken in increasing order from a
/// shared counter, on `threads` workers (the process's kept threads, thread_pool.hpp: a worker
/// that is busy elsewhere leaves its chunks to the others, so every worker number in [0,
/// threads) is used by at most one thread, but not every one need be used); worker 0 is the
/// calling thread, which alone calls `progress(fraction_done)` (at most ten times a second):
/// between its chunks, inside them where the body calls cancellation_point(), and while it waits
/// for the other workers' last chunks. The first exception thrown by any worker (or by
/// `progress`) stops the hand-out of new chunks, stops the bodies at their next
/// cancellation_point(), and is rethrown here. A loop without a callback, inside another loop's
/// body or a progress_scope, asks the enclosing one between its chunks and stops with it.
template <class Body>
void parallel_for(unsigned threads, std::size_t n, std::size_t grain, Body&& body,
                  const std::function<void(double)>& progress = {}) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks = (n + grain - 1) / grain;
  const unsigned workers =
      static_cast<unsigned>(std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(chunks, 1)));
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  others_running others;

  auto work = [&](unsigned worker) {
    loop_watch watch(worker == 0 && progress ? &progress : nullptr, done, n, failed);
    const loop_watch_scope scope(&watch);
    if (worker != 0) others.enter();
    try {
      for (;;) {
        if (failed.load(std::memory_order_relaxed)) break;
        const std::size_t begin = next.fetch_add(grain, std::memory_order_relaxed);
        if (begin >= n) break;
        const std::size_t end = std::min(n, begin + grain);
        body(begin, end, worker);
        done.fetch_add(end - begin, std::memory_order_relaxed);
        // Reports when due; a loop without a callback asks the enclosing one's (or the
        // progress_scope's), and stops with it.
        watch.check();
      }
      // The others' last chunks may take a while: Ctrl-C is still heard meanwhile.
      if (worker == 0 && progress) others.wait_until_none(failed, [&] { watch.report_if_due(); });
    } catch (...) {
      // A loop_stopped of this loop comes after its first error, which stays the one rethrown;
      // one of an enclosing loop's (a nested loop without progress) stops this loop too.
      std::lock_guard lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
      failed = true;
    }
    if (worker != 0) others.leave();
  };

  run_on_workers(workers, work);
  if (first_error) std::rethrow_exception(first_error);
  if (progress) progress(1.0);
}

/// out[0] = 0 and out[p + 1] = out[p] + in[p] (out has in.size() + 1 elements), on `threads`
/// workers: each block of `block` elements is summed, the sums' prefix taken, then each block
/// scanned from its offset.
template <class In, class Out>
void exclusive_scan(std::span<const In> in, std::span<Out> out, unsigned threads,
                    std::size_t block = std::size_t{1} << 16) {
  const std::size_t n = in.size();
  out[0] = 0;
  if (n == 0) return;
  block = std::max<std::size_t>(block, 1);
  const std::size_t blocks = (n + block - 1) / block;
  std::vector<Out> offset(blocks + 1, 0);
  parallel_for(threads, n, block, [&](std::size_t b, std::size_t e, unsigned) {
    Out sum = 0;
    for (std::size_t p = b; p < e; ++p) sum += in[p];
    offset[b / block + 1] = sum;
  });
  for (std::size_t k = 0; k < blocks; ++k) offset[k + 1] += offset[k];
  parallel_for(threads, n, block, [&](std::size_t b, std::size_t e, unsigned) {
    Out at = offset[b / block];
    for (std::size_t p = b; p < e; ++p) {
      at += in[p];
      out[p + 1] = at;
    }
  });
}

}  // namespace epsjoin::detail
