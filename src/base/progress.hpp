#pragma once
// Progress over a whole join: engines report each pass from 0 to 1; a join of several passes
// places each pass on one scale, and what the caller sees never goes back (it may repeat).

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>

namespace epsjoin::detail {

/// The share of a count-then-fill join's time its counting pass takes, for progress only: the
/// count computes half the distances (LID-UNICOMP) and writes nothing.
inline constexpr double count_pass_share = 0.25;

/// Where a join's engine ends on the caller's scale: the sink's finish (which sorts the rows)
/// comes after it, and only the join, once everything is done, says 1. The reports in between
/// repeat 0.99: they are how Ctrl-C is heard there.
inline constexpr double engine_share = 0.99;

/// `report` for a pass that spans [begin, end] of the whole join; `shown` (shared by the passes
/// of one join) keeps the reported fraction from going back. Empty when `report` is.
inline std::function<void(double)> progress_span(const std::function<void(double)>& report,
                                                 double begin, double end,
                                                 std::shared_ptr<std::atomic<double>> shown) {
  if (!report) return {};
  return [report, begin, end, shown = std::move(shown)](double f) {
    const double at = begin + (end - begin) * std::clamp(f, 0.0, 1.0);
    double before = shown->load(std::memory_order_relaxed);
    while (at > before && !shown->compare_exchange_weak(before, at)) {
    }
    // Reported even when it did not move: the callback is also how the caller cancels (a pass
    // that reports 0 throughout, such as the result estimate's, must still hear Ctrl-C).
    report(std::max(at, before));
  };
}

}  // namespace epsjoin::detail
