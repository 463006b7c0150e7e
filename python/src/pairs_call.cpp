// epsjoin.pairs: a join's unique pairs as an (m, 2) int64 array, from the library's
// pairs_array_sink (include/epsjoin/pairs_array.hpp says how they are made).

#include <cstdint>
#include <memory>

#include <epsjoin/epsjoin.hpp>
#include <epsjoin/pairs_array.hpp>

#include "join_calls.hpp"
#include "join_support.hpp"
#include "owned_array.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

nb::tuple pairs_from_rows(points_array queries, std::optional<points_array> data, double eps,
                          bool include_self, bool sort, const run_settings& settings, bool once) {
  epsjoin::pairs_array_sink sink({.self_join = !data.has_value(),
                                  .sort = sort,
                                  .threads = settings.threads,
                                  .memory_limit = settings.host_memory_bytes,
                                  .pairs_once = once});
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  std::unique_ptr<epsjoin::pairs_array> pairs = sink.release();
  const std::size_t m = pairs->size();
  std::int64_t* p = pairs->data();
  return nb::make_tuple(numpy_view(p, {m, 2}, owner_of(std::move(pairs))), stats_dict(stats));
}

}  // namespace epsjoin_python
