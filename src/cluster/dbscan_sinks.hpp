#pragma once
// The two sinks DBSCAN runs its joins into. Neither keeps a pair: each folds what arrives into
// arrays of one entry per point, so memory stays O(N) however many pairs the join finds.

#include <cstdint>
#include <span>

#include "cluster/union_find.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

/// Each point's number of neighbours (self excluded), added atomically into `counts`
/// (zeroed by the caller): through the engines' count path, or from pairs for an engine that
/// has none.
class neighbour_count_sink final : public result_sink {
 public:
  explicit neighbour_count_sink(std::span<std::uint32_t> counts) : counts_(counts) {}
  sink_request request() const override { return {.form = result_form::counts}; }
  void consume(std::span<const index_pair> pairs) override;
  row_destination consume_counts(const count_batch& counts) override;

 private:
  std::span<std::uint32_t> counts_;
};

/// Each point's neighbours' weights summed (self excluded) into `sums` (zeroed by the caller),
/// for weighted core points: pairs are needed, so no engine may only count.
class weighted_count_sink final : public result_sink {
 public:
  weighted_count_sink(std::span<const double> weights, std::span<double> sums)
      : weights_(weights), sums_(sums) {}
  void consume(std::span<const index_pair> pairs) override;
  sink_request request() const override { return {.form = result_form::unique_pairs}; }
  void consume_rows(const row_segment& rows) override;

 private:
  std::span<const double> weights_;
  std::span<double> sums_;
};

/// No core neighbour yet (the initial value of the nearest-core array).
inline constexpr std::uint32_t no_core = UINT32_MAX;

/// Pass 2: a core-core pair unites the two points' sets (the core points are the members of
/// `sets`); a core-border pair lowers the border point's smallest core neighbour (`min_core`, an
/// atomic minimum per point, filled with no_core by the caller); a pair of two non-core points
/// carries nothing. Takes each unordered pair once from an engine that finds it once (cpu-grid,
/// super-ego: half the pairs handed over and looked up), otherwise ordered pairs, of which it
/// keeps those whose query is core (the other direction carries nothing more).
class core_merge_sink final : public result_sink {
 public:
  /// @param threads threads a single large batch (a GPU engine's) is split over
  core_merge_sink(concurrent_union_find sets, std::span<std::uint32_t> min_core, unsigned threads)
      : sets_(sets), min_core_(min_core), threads_(threads) {}
  void consume(std::span<const index_pair> pairs) override;
  sink_request request() const override { return {.form = result_form::unique_pairs}; }
  void consume_rows(const row_segment& rows) override;

 private:
  void merge(std::span<const index_pair> pairs) const;
  void merge_unordered(std::span<const std::uint32_t> is, std::span<const std::uint32_t> js) const;
  concurrent_union_find sets_;
  std::span<std::uint32_t> min_core_;
  unsigned threads_;
};

}  // namespace epsjoin::detail
