#pragma once
// Distance loops unrolled for the papers' dimensionalities: a run-time d becomes a template
// argument when it is small, so the loop over dimensions is unrolled and its sums stay in
// registers; larger d runs the generic loop (D = 0, d read at run time).

#include <cstddef>

namespace epsjoin::detail {

/// Calls `f.template operator()<D>()` with D = d when 1 <= d <= Max, else with D = 0.
template <int Max, int D = 1, class F>
decltype(auto) with_static_dim(std::size_t d, F&& f) {
  if constexpr (D > Max) {
    return f.template operator()<0>();
  } else {
    if (d == static_cast<std::size_t>(D)) return f.template operator()<D>();
    return with_static_dim<Max, D + 1>(d, static_cast<F&&>(f));
  }
}

}  // namespace epsjoin::detail
