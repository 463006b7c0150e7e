#pragma once
// Test point sets of the shapes DESIGN.md asks every engine to survive. Own generators, so the
// tests do not depend on the library's.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin::test {

enum class shape_kind {
  uniform,     // uniform in [0, 1]^d
  clusters,    // tight Gaussian blobs
  skewed,      // exponential(40) per coordinate, as the papers' Expo data
  duplicates,  // few distinct points, each repeated many times
  lattice,     // integer grid with spacing exactly eps (0.25): pairs at distance exactly eps
  embedded,    // 2-D data embedded in d dimensions (other coordinates constant)
  offset,      // uniform data shifted by 1e6 (large coordinates, small differences)
};

std::string to_string(shape_kind kind);
/// GoogleTest prints a shape in a parameter tuple with this.
inline void PrintTo(shape_kind kind, std::ostream* out) { *out << to_string(kind); }

/// n points of dimension d; deterministic in (kind, n, d, seed).
dataset make_shape(shape_kind kind, std::size_t n, std::size_t d, std::uint64_t seed);

/// eps giving about `selectivity` neighbours per query (self excluded), estimated from up to 64
/// sample queries against all of `data`.
double eps_for_selectivity(dataset_view queries, dataset_view data, double selectivity);

/// `pairs` pairs of points at distance eps (1 - rel) and eps (1 + rel) in turn, in random
/// directions, the first point of each uniform in [lo, hi]^d: pairs an engine must decide by
/// where they fall on either side of eps; deterministic in the arguments.
dataset pairs_around_eps(std::size_t d, std::size_t pairs, double eps, double rel, double lo,
                         double hi, std::uint64_t seed);

/// An eps near `target` with no pair distance of the self-join of `points` within a relative
/// `band` of it (four times over), so engines that sum in another order or in float32 cannot
/// disagree with an oracle about any pair. O(N^2): for small test sets.
double eps_clear_of_pairs(dataset_view points, double target, double band);

/// An eps that every pair of the two sets satisfies (twice the bounding-box diagonal).
double eps_for_all_pairs(dataset_view queries, dataset_view data);

}  // namespace epsjoin::test
