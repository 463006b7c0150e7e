#pragma once
// Cancellation inside parallel_for's chunks. A join stops when its progress callback throws
// (join_options::progress: Python's Ctrl-C), but parallel_for can call the callback only between
// the calling thread's chunks, and one chunk may run for seconds: a dense cell, a super-ego work
// item in 256 dimensions, a fill whose first rows take the page faults of a fresh table of
// gigabytes (98% of a 1M-point graph's fill at first, measured with perf). Long bodies call
// cancellation_point() between small steps instead: on the calling thread it reports progress
// when a tenth of a second has passed (the callback may throw there), and on every thread it
// stops the body once another worker has failed.

#include <atomic>
#include <cstddef>
#include <ctime>
#include <functional>

namespace epsjoin::detail {

/// Thrown by cancellation_point() in a worker whose loop is already stopping; parallel_for
/// rethrows the first failure, never this.
struct loop_stopped {};

class loop_watch;

/// The watch of the parallel_for body (or progress_scope) this thread is running in, if any.
inline thread_local loop_watch* current_loop_watch = nullptr;

/// What one worker of a parallel_for lends the bodies it runs: the loop's stop flag, and on the
/// thread that reports (the caller of a loop with a callback) the callback, else the enclosing
/// watch of this thread (a loop without a callback stops with the loop around it).
class loop_watch {
 public:
  /// `progress`: the loop's callback on the thread that reports, else null. Made on the thread
  /// that will use it: the enclosing watch is that thread's.
  loop_watch(const std::function<void(double)>* progress, const std::atomic<std::size_t>& done,
             std::size_t n, const std::atomic<bool>& failed)
      : progress_(progress), done_(done), n_(n), failed_(failed), outer_(current_loop_watch),
        last_(now_ms()) {}

  /// Throws loop_stopped when this loop is stopping; reports progress when it is due (what the
  /// callback throws, this throws). A watch without a callback asks the enclosing one instead;
  /// one with a callback reports alone (a device's shard reports to its own callback).
  void check() {
    if (failed_.load(std::memory_order_relaxed)) throw loop_stopped{};
    if (progress_ != nullptr) {
      report_if_due();
    } else if (outer_ != nullptr) {
      outer_->check();
    }
  }

  /// The callback with the fraction done, at most ten times a second (what it throws, it throws).
  /// Out of line: the kernels that ask inline only the loads above.
  [[gnu::noinline]] void report_if_due() {
    if (progress_ == nullptr) return;
    const long long t = now_ms();
    if (t - last_ < 100) return;
    last_ = t;
    (*progress_)(static_cast<double>(done_.load(std::memory_order_relaxed)) /
                 static_cast<double>(n_));
  }

 private:
  // The coarse clock: a few nanoseconds a read, so bodies may ask every few microseconds.
  static long long now_ms() {
    timespec ts{};
#ifdef CLOCK_MONOTONIC_COARSE
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  }

  const std::function<void(double)>* progress_;
  const std::atomic<std::size_t>& done_;
  std::size_t n_;
  const std::atomic<bool>& failed_;
  loop_watch* outer_;
  long long last_;
};

/// Makes `watch` this thread's for the scope and restores the enclosing one afterwards.
class loop_watch_scope {
 public:
  explicit loop_watch_scope(loop_watch* watch) : outer_(current_loop_watch) {
    current_loop_watch = watch;
  }
  ~loop_watch_scope() { current_loop_watch = outer_; }
  loop_watch_scope(const loop_watch_scope&) = delete;
  loop_watch_scope& operator=(const loop_watch_scope&) = delete;

 private:
  loop_watch* outer_;
};

/// Ctrl-C in a join's stretches outside its reporting loops (planning, laying rows out, the
/// sink's finish, which sorts the rows): for the scope, the calling thread's parallel loops
/// without a callback of their own call `progress(0)` between their chunks, at most ten times a
/// second. `progress` must be one that never goes back (progress_span), as 0 is all it says.
class progress_scope {
 public:
  explicit progress_scope(const std::function<void(double)>& progress)
      : progress_(progress), watch_(progress_ ? &progress_ : nullptr, done_, 1, stopped_),
        scope_(&watch_) {}

 private:
  std::function<void(double)> progress_;
  std::atomic<std::size_t> done_{0};
  std::atomic<bool> stopped_{false};
  loop_watch watch_;
  loop_watch_scope scope_;
};

/// Called by long loop bodies between steps of at most a few milliseconds: throws once the join
/// is being cancelled (the caller's progress callback threw, or another worker failed), so every
/// thread stops within its step and its RAII frees what it held. Does nothing outside a
/// parallel_for or progress_scope.
inline void cancellation_point() {
  if (loop_watch* watch = current_loop_watch) watch->check();
}

}  // namespace epsjoin::detail
