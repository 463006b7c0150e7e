#pragma once
// Before a join whose result a sink keeps in host memory, the result's size is estimated from a
// sample of its queries, and the join is refused at once where even a lower bound of it does not
// fit (DESIGN.md, Memory). Counting every pair first took minutes on the CPU engines for tables
// that could never fit. The exact check after the count (counting_sink) stays for close cases:
// this one refuses only what is far over with overwhelming probability, never a join that fits.

#include <cstdint>
#include <span>
#include <string_view>

#include "base/memory_budget.hpp"
#include "epsjoin/dataset.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/stats.hpp"

namespace epsjoin {
class result_sink;
}

namespace epsjoin::detail {

/// The host bytes the join's own checks (counting_sink) will require for a result of `pairs`
/// ordered pairs (self pairs apart), whichever way the engine delivers it.
struct result_footprint {
  std::size_t n_queries = 0;
  std::uint64_t self_ids = 0;  ///< the self slots a table gets (a self-join with its self pairs)
  bool rows = false;           ///< the sink takes rows in place (sink_request::rows_in_place)
  double kept_per_pair = 0;    ///< result_sink::bytes_kept_per_pair
  double added_per_pair = 0;   ///< result_sink::bytes_added_per_pair

  /// The footprint of `sink` for a join of `n_queries` queries.
  static result_footprint of(const result_sink& sink, std::size_t n_queries, bool self_ids);
  /// The fewest bytes over the deliveries the engine may choose: rows in place (offsets, then 4
  /// bytes and what the caller adds an id) and pairs as they arrive (what the sink keeps and the
  /// caller adds a pair; nothing where those are 0, as such pairs are not bounded).
  std::uint64_t bytes(double pairs) const;
  /// The result's name in a refusal, as the check after the count names it.
  const char* what() const;
};

/// The estimate's sizes: fixed, but for tests that run it on small inputs.
struct estimate_settings {
  /// Queries sampled (distinct, uniformly at random, a fixed seed).
  std::size_t sample_queries = 4096;
  /// No estimate below sample_queries times this many queries: counting them all costs little
  /// more than the sample would.
  std::size_t queries_per_sample = 16;
  /// Data points a first, rough estimate joins the sample against; where the rough estimate is
  /// far below what is available, the sample is not joined against all the data (whose index
  /// would cost about as much as a small join's).
  std::size_t gate_points = std::size_t{1} << 16;
  /// Standard errors below the sampled mean that the lower bound lies.
  double z = 6;
};

/// A lower bound of the sum of a population's `population` values, from `counts`, the values of
/// a uniform random sample of distinct members: the sampled mean less z standard errors, scaled
/// up, never below the sample's own sum (which is part of the total). The sample's variance
/// stands for the population's (z widened to Student's t); without the finite-population
/// factor the bound errs low.
double total_lower_bound(std::span<const std::uint64_t> counts, std::uint64_t population, double z);

/// The radius the sample is counted at: eps less a margin wider than any band inside which
/// engines may differ (their error band, float32's rounding of the distance and, where float64
/// coordinates up to `coordinate_bound` in magnitude are rounded to float32, of the points), so
/// every pair the sample counts is one the engine finds too, ties at exactly eps included.
/// 0: no such radius.
double sample_eps(const join_options& options, std::size_t d, double engine_band,
                  double coordinate_bound);

/// Who counts the sample, and the band inside which the join's engine may differ from it.
struct estimate_engines {
  std::string_view sampler;  ///< an engine that counts the same pairs (a fast, exact one)
  double band = 0;           ///< the join engine's engine::error_band
};

/// Estimates the result of the join (queries x data, or data with itself) from a sample of its
/// queries, counted by `engines.sampler` at sample_eps, and throws
/// out_of_memory, before any of the result is allocated, where even the estimate's lower bound
/// does not fit what `budget` has available. Adds an "estimate" stage and a note to `stats`
/// when it ran; returns at once where the join is too small for the estimate to pay.
void refuse_what_cannot_fit(resources& res, dataset_view queries, dataset_view data, bool self,
                            const join_options& options, const estimate_engines& engines,
                            const result_footprint& footprint, const memory_budget& budget,
                            join_stats& stats, const estimate_settings& settings = {});

}  // namespace epsjoin::detail
