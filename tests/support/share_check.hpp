#pragma once
// Shares of the work items (join_options::share): counted one share at a time, as mpi-join's
// ranks count them, they must add up to the oracle's counts.

#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin::test {

/// Counts `engine`'s join (`queries` null: the self-join of `points`) at `eps` once in each of
/// `count` shares, for every count in `share_counts`, and expects each point's count and the
/// total summed over the shares to equal brute-cpu's. Shares run on 1 and on 2 threads in turn,
/// since every process must cut the same items whatever its cores. With `include_self`, the
/// self pairs come from share 0 alone.
void expect_shares_add_up(const std::string& engine, const dataset& points, const dataset* queries,
                          double eps, const std::vector<unsigned>& share_counts,
                          bool include_self = false);

}  // namespace epsjoin::test
