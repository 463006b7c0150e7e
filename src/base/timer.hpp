#pragma once

#include <chrono>

namespace epsjoin::detail {

class stopwatch {
 public:
  stopwatch() : start_(clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }
  void restart() { start_ = clock::now(); }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_;
};

}  // namespace epsjoin::detail
