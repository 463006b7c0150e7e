#pragma once
// What the join calls share (join_calls.cpp, pairs_call.cpp): a join run on the call's points
// with the GIL released, and a pass after it (the library's, on its threads) with the GIL
// released and Ctrl-C heard.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
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
