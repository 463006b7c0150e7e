// The k nearest within a radius of a join (epsjoin/nearest.hpp): the join into a nearest_sink.

#include "epsjoin/join.hpp"
#include "epsjoin/nearest.hpp"

namespace epsjoin {

nearest_table nearest_within(resources& res, dataset_view queries, dataset_view data, std::size_t k,
                             const join_options& options, join_stats* stats) {
  nearest_sink sink(queries, data, k, options);
  join_stats s = join(res, queries, data, options, sink);
  if (stats != nullptr) *stats = std::move(s);
  return sink.release();
}

nearest_table self_nearest_within(resources& res, dataset_view points, std::size_t k,
                                  const join_options& options, join_stats* stats) {
  nearest_sink sink(points, points, k, options);
  join_stats s = self_join(res, points, options, sink);
  if (stats != nullptr) *stats = std::move(s);
  return sink.release();
}

}  // namespace epsjoin
