#pragma once
/// @file nearest.hpp
/// @brief The k nearest neighbours within a radius: each query's k closest points among those
/// within `eps`, sorted by distance, from any join (every engine, an `eps_index`, A x B or a
/// self-join). What OPTICS' core distances and HDBSCAN's mutual reachability need, in memory of
/// k entries a query whatever the join's result.
///
/// @code
///   epsjoin::resources res;
///   epsjoin::join_options opt;
///   opt.eps = 0.05;                                   // the radius bound
///   epsjoin::nearest_table near = epsjoin::nearest_within(res, queries.view(), points.view(),
///                                                         8, opt);
///   // near.row(q): up to 8 ids, nearest first; near.distance_row(q) their distances
/// @endcode

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"
#include "epsjoin/sink.hpp"
#include "epsjoin/stats.hpp"

namespace epsjoin {

/// @brief Rows of at most k neighbours each, nearest first: query q's are
///        neighbors[offsets[q] .. offsets[q + 1]) at distances[...] of the same positions.
///        Equal distances are ordered by id, so the result is the same on every engine and run.
struct nearest_table {
  std::vector<std::uint64_t> offsets;  ///< [n_queries + 1]
  std::vector<std::uint32_t> neighbors;
  std::vector<double> distances;  ///< in the join's metric, as a distance graph reports them

  std::size_t n_queries() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::span<const std::uint32_t> row(std::size_t q) const noexcept {
    return {neighbors.data() + offsets[q], static_cast<std::size_t>(offsets[q + 1] - offsets[q])};
  }
  std::span<const double> distance_row(std::size_t q) const noexcept {
    return {distances.data() + offsets[q], static_cast<std::size_t>(offsets[q + 1] - offsets[q])};
  }
};

/// @brief A sink that keeps each query's k nearest neighbours among the pairs it receives.
///
/// Takes pairs from any engine, from several threads at once; each pair's distance is computed
/// from the points in the options' metric and periodic box (Euclidean: the distance a distance
/// graph reports, to the last bit). Host memory: 16 bytes per kept neighbour (12 in the table
/// it hands over), k per query, and nothing per pair. The points must stay alive and
/// unchanged until `finish`.
class nearest_sink final : public result_sink {
 public:
  /// @param queries [host] the join's query points (its points, for a self-join)
  /// @param data    [host] the points the neighbours are ids of
  /// @param k       neighbours kept per query, at least 1
  /// @param options the join's metric, box, angles and sphere radius (eps is not read)
  /// @throws invalid_argument for k of 0 or points in device memory.
  nearest_sink(dataset_view queries, dataset_view data, std::size_t k, const join_options& options);
  ~nearest_sink() override;
  nearest_sink(const nearest_sink&) = delete;
  nearest_sink& operator=(const nearest_sink&) = delete;

  sink_request request() const override;
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override;
  void finish() override;
  /// The rows, once `finish` has run.
  const nearest_table& table() const noexcept { return table_; }
  nearest_table release() noexcept { return std::move(table_); }

 private:
  struct state;
  std::size_t queries_n_ = 0, data_n_ = 0;
  std::unique_ptr<state> state_;
  nearest_table table_;
};

/// @brief Each query's k nearest points of `data` within `options.eps` (the join's options: eps,
///        engine, metric, ...), as `join` finds them.
nearest_table nearest_within(resources& res, dataset_view queries, dataset_view data, std::size_t k,
                             const join_options& options, join_stats* stats = nullptr);

/// @brief Each point's k nearest other points within `options.eps` (`options.include_self`
///        adds the point itself, at distance 0, as scikit-learn's kneighbors(X) counts it).
nearest_table self_nearest_within(resources& res, dataset_view points, std::size_t k,
                                  const join_options& options, join_stats* stats = nullptr);

}  // namespace epsjoin
