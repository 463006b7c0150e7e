#pragma once
// A progress bar on stderr for long runs: appears after one second, only on a terminal.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace epsjoin::cli {

class progress_bar {
 public:
  /// `enabled` false makes every call a no-op (not a terminal, --quiet, --json). A bar that is
  /// never updated (`measured` false: a step with no fractions, such as writing a file) shows
  /// its label and the time spent only.
  progress_bar(std::string label, bool enabled, bool measured = true);
  ~progress_bar();
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;

  void update(double fraction) { fraction_.store(fraction, std::memory_order_relaxed); }
  /// Stops the ticker and erases the bar.
  void stop();
  static bool stderr_is_terminal();

 private:
  void run();
  std::string label_;
  bool measured_ = true;
  std::atomic<double> fraction_{0.0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool drawn_ = false;
  std::thread ticker_;
};

}  // namespace epsjoin::cli
