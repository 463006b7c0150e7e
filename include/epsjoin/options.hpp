#pragma once
/// @file options.hpp
/// @brief What a join computes and which engine computes it.

#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include "epsjoin/dataset.hpp"

namespace epsjoin {

/// @brief Options of one join. Only `eps` has no usable default.
/// @code
///   epsjoin::join_options opt;
///   opt.eps = 0.01;          // the radius; pairs with squared distance <= eps * eps
///   opt.engine = "auto";
/// @endcode
struct join_options {
  /// Radius (never its square). Must be finite and > 0.
  double eps = 0.0;
  /// Registered engine name, or "auto" to let epsjoin pick (see `engines()`).
  std::string engine = "auto";
  /// Precision of the distance computation. Engines that cannot honour f32 compute in f64.
  scalar_type precision = scalar_type::f64;
  /// Let engines with an approximate mode (ted-join, meta-16q, meta-1q, gds-join with
  /// arithmetic=fp16|fp16-fp32) skip their exactness re-check,
  /// as the papers' implementations do; they then report their accuracy against the direct
  /// formula in the run's stats. Exact engines ignore it.
  bool approximate = false;
  /// Self-join only: also report (i, i) for every point.
  bool include_self = false;
  /// Engine-specific tuning as key=value strings (for example "pattern" -> "lid-unicomp").
  /// An engine rejects keys it does not know with invalid_argument, so typos are not ignored.
  std::map<std::string, std::string> params;
  /// Called now and then with the fraction of the work done, in [0, 1]; may be empty.
  /// Called from the thread that runs the join, about ten times a second. It is also the way
  /// to cancel: an exception it throws stops the join, which frees what it holds and rethrows
  /// it from self_join / join (the Python package turns Ctrl-C into KeyboardInterrupt so).
  std::function<void(double)> progress;
};

}  // namespace epsjoin
