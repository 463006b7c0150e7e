#include "progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace epsjoin::cli {

progress_bar::progress_bar(std::string label, bool enabled, bool measured)
    : label_(std::move(label)), measured_(measured) {
  if (enabled) ticker_ = std::thread([this] { run(); });
}

progress_bar::~progress_bar() { stop(); }

bool progress_bar::stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

void progress_bar::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (drawn_) {
    std::fprintf(stderr, "\r%*s\r", 72, "");
    drawn_ = false;
  }
}

void progress_bar::run() {
  using namespace std::chrono_literals;
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  // Short runs finish silently: nothing is drawn during the first second.
  if (wake_.wait_for(lock, 1s, [this] { return stopping_; })) return;
  while (!stopping_) {
    const double f = fraction_.load(std::memory_order_relaxed);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (measured_) {
      constexpr int width = 30;
      const int filled = static_cast<int>(f * width);
      std::string bar(static_cast<std::size_t>(filled), '#');
      bar.resize(width, '.');
      // The time left at the pace so far; not shown until the pace means something.
      char eta[32] = "";
      if (f >= 0.02 && f < 1) std::snprintf(eta, sizeof eta, ", %.0f s left", elapsed * (1 - f) / f);
      std::fprintf(stderr, "\r%s [%s] %5.1f%%  %.1f s%s   ", label_.c_str(), bar.c_str(),
                   100.0 * f, elapsed, eta);
    } else {
      std::fprintf(stderr, "\r%s  %.1f s   ", label_.c_str(), elapsed);
    }
    std::fflush(stderr);
    drawn_ = true;
    wake_.wait_for(lock, 200ms, [this] { return stopping_; });
  }
}

}  // namespace epsjoin::cli
