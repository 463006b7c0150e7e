#pragma once
// What the join calls share (join_calls.cpp, pairs_call.cpp): a join run on the call's points
// with the GIL released, the table sink that holds the arrays made from the table to the memory
// limit, and the passes after a join that turn a table into what Python wants, on the call's
// threads and with Ctrl-C heard.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include <epsjoin/epsjoin.hpp>

#include "join_calls.hpp"
#include "released_call.hpp"

namespace epsjoin_python {

template <class Sink>
epsjoin::join_stats run_join(const points_array& queries, const std::optional<points_array>& data,
                             double eps, bool include_self, const run_settings& s, Sink& sink) {
  const epsjoin::dataset_view a = view_of(queries);
  if (!data) {
    return run_join_released(eps, include_self, s,
                             [&](epsjoin::resources& r, const epsjoin::join_options& o) {
                               return epsjoin::self_join(r, a, o, sink);
                             });
  }
  const epsjoin::dataset_view b = view_of(*data);
  check_same_dtype(a, b);
  return run_join_released(eps, include_self, s,
                           [&](epsjoin::resources& r, const epsjoin::join_options& o) {
                             return epsjoin::join(r, a, b, o, sink);
                           });
}

/// Results of gigabytes: not zeroed before they are written, in the library's huge-page blocks
/// (a page fault per 2 MiB, not per 4 KiB).
template <class T>
using output_vector = std::vector<T, epsjoin::default_init_allocator<T>>;

/// Ctrl-C for the passes after a join (the join hears it through its progress callback): the
/// calling thread, Python's main one, asks at most ten times a second; `interrupted` then stops
/// every thread of the pass at its next piece of rows.
class pass_interrupts {
 public:
  /// Called by the calling thread between pieces; throws interrupted on Ctrl-C.
  void poll() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    try {
      check_(0.0);
    } catch (const interrupted&) {
      stop_.store(true, std::memory_order_relaxed);
      throw;
    }
  }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  std::function<void(double)> check_ = interrupt_check();
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::atomic<bool> stop_{false};
};

/// fn(begin, end) over [0, n) in one contiguous block per thread (0: every hardware thread),
/// for the light per-row passes that turn a table into what Python wants; each block in pieces
/// of `piece` rows, between which Ctrl-C is heard (throws interrupted, all threads joined).
template <class Fn>
void for_row_blocks(std::size_t n, unsigned threads, Fn&& fn, std::size_t piece = 1 << 14) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers =
      std::clamp<std::size_t>(threads == 0 ? hw : threads, 1, std::max<std::size_t>(n / 4096, 1));
  pass_interrupts interrupts;
  auto block = [&](std::size_t begin, std::size_t end, bool caller) {
    for (std::size_t at = begin; at < end && !interrupts.stopped(); at += piece) {
      fn(at, std::min(end, at + piece));
      if (caller) interrupts.poll();
    }
  };
  std::mutex mutex;
  std::condition_variable one_finished;
  std::size_t finished = 0;
  std::vector<std::thread> pool_threads;
  for (std::size_t w = 1; w < workers; ++w) {
    pool_threads.emplace_back([&, w] {
      block(n * w / workers, n * (w + 1) / workers, false);
      {
        std::lock_guard lock(mutex);
        ++finished;
      }
      one_finished.notify_one();
    });
  }
  try {
    block(0, n / workers, true);
    // Still heard while the others finish; woken as soon as they have.
    std::unique_lock lock(mutex);
    while (finished + 1 < workers) {
      if (one_finished.wait_for(lock, std::chrono::milliseconds(100)) == std::cv_status::timeout) {
        lock.unlock();
        interrupts.poll();
        lock.lock();
      }
    }
  } catch (const interrupted&) {
    for (auto& t : pool_threads) t.join();
    throw;
  }
  for (auto& t : pool_threads) t.join();
}

/// `body()` with the GIL released; Ctrl-C heard inside it (interrupted) raises
/// KeyboardInterrupt once the GIL is back, everything the body allocated freed by then.
template <class Body>
void released_pass(Body&& body) {
  bool stopped = false;
  {
    nb::gil_scoped_release release;
    try {
      body();
    } catch (const interrupted&) {
      stopped = true;
    }
  }
  if (stopped) throw nb::python_error();
}

}  // namespace epsjoin_python
