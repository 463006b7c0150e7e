#pragma once
// The run notes every FP16 engine (meta-16q, meta-1q, gds-join's FP16 arithmetic) reports: how
// the data was scaled, how many pairs fell inside the error band, and the accuracy ratio of the
// low-precision decision alone (dissertation table 6.6), in the exact mode too.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/decision_tally.cuh"
#include "core/engine.hpp"
#include "tensor/fp16/half_bound.hpp"

namespace epsjoin::detail::fp16 {

/// `pairs`: what the mode that ran found (self pairs not counted); `arithmetic` names the
/// low-precision distance, e.g. "FP16-FP32".
inline void report_half_decisions(join_stats& stats, const half_scaling& scaling,
                                  const decision_tally::counts& tally, std::uint64_t pairs,
                                  bool approximate, std::string_view arithmetic) {
  const decision_accuracy accuracy = accuracy_of(tally, pairs, approximate);
  stats.notes.push_back(
      {"scaling", concat("coordinates translated to the data's mean and multiplied by 2^",
                         scaling.exponent, " before rounding to FP16 (eps likewise)")});
  stats.notes.push_back(
      {"band re-checks",
       concat(tally.band, " ordered pairs within the ", arithmetic, " error band ",
              approximate ? concat("(decided by the ", arithmetic,
                                   " distance; the direct formula only measured them)")
                          : std::string("re-checked with the direct formula"),
              accuracy.exact_pairs == 0 ? std::string()
                                        : concat(": ",
                                                 100.0 * static_cast<double>(tally.band) /
                                                     static_cast<double>(accuracy.exact_pairs),
                                                 "% of the exact result"))});
  stats.notes.push_back(
      {"accuracy",
       concat(approximate ? std::string("approximate: ")
                          : concat("exact; the ", arithmetic, " decision alone would give "),
              accuracy.approximate_pairs, " pairs (self pairs not counted), ",
              tally.only_approximate, " of them not in the exact result, ", tally.only_exact,
              " exact pairs missed; accuracy ratio ", accuracy.ratio)});
}

}  // namespace epsjoin::detail::fp16
