#include "core/point_checks.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

void check_points_shape(dataset_view v, const char* what) {
  constexpr std::size_t max_points = std::numeric_limits<std::uint32_t>::max();
  EPSJOIN_EXPECTS(v.n <= max_points, what, " has ", v.n, " points; ids are 32-bit, so at most ",
                  max_points, " are supported");
  if (v.n == 0) return;
  EPSJOIN_EXPECTS(v.d >= 1, what, " has points of dimension 0");
  EPSJOIN_EXPECTS(v.data != nullptr, what, " has ", v.n, " points but no data pointer");
}

void check_host_points_finite(dataset_view v, const char* what, unsigned threads) {
  // A NaN would make every comparison false and lose pairs silently; reject it up front. On all
  // threads (one thread took 0.5 s for 2^20 points in 256-D); only a failure is looked for
  // again in order, so the message names the first bad coordinate.
  if (v.n == 0) return;
  std::atomic<bool> all_finite{true};
  parallel_for(threads, v.n, std::max<std::size_t>(1, (1u << 16) / v.d),
               [&](std::size_t begin, std::size_t end, unsigned) {
                 bool finite = true;
                 for (std::size_t i = begin; i < end; ++i)
                   for (std::size_t k = 0; k < v.d; ++k) finite &= std::isfinite(v.at(i, k));
                 if (!finite) all_finite.store(false, std::memory_order_relaxed);
               });
  if (all_finite.load()) return;
  for (std::size_t i = 0; i < v.n; ++i) {
    for (std::size_t k = 0; k < v.d; ++k) {
      const double x = v.at(i, k);
      EPSJOIN_EXPECTS(std::isfinite(x), what, ": point ", i, ", dimension ", k, " is ", x,
                      "; coordinates must be finite");
    }
  }
}

void emit_self_pairs(result_sink& sink, std::size_t n) {
  constexpr std::size_t chunk = std::size_t{1} << 16;
  std::vector<std::uint32_t> ids, ones;
  std::vector<index_pair> pairs;
  for (std::size_t begin = 0; begin < n; begin += chunk) {
    const std::size_t end = std::min(n, begin + chunk);
    if (sink.request().counts_only()) {
      ids.resize(end - begin);
      ones.assign(end - begin, 1);
      for (std::size_t i = begin; i < end; ++i) ids[i - begin] = static_cast<std::uint32_t>(i);
      hand_counts(sink, ids, ones);
    } else {
      pairs.clear();
      for (std::size_t i = begin; i < end; ++i) {
        pairs.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i)});
      }
      sink.consume(pairs);
    }
  }
}

}  // namespace epsjoin::detail
