// The progress a caller sees over a whole join: one climb from 0 to 1, never back, also when
// the engine runs two passes (count, then fill) that each report from 0 to 1.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "epsjoin/epsjoin.hpp"

namespace {

std::vector<double> uniform_points(int n) {
  std::vector<double> coords;
  std::uint64_t state = 88172645463325252ull;  // xorshift64: deterministic and dependency-free
  for (int i = 0; i < 2 * n; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    coords.push_back(static_cast<double>(state >> 11) / 9007199254740992.0);
  }
  return coords;
}

void expect_one_climb(const std::vector<double>& seen) {
  ASSERT_FALSE(seen.empty());
  for (std::size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i], seen[i - 1]) << "progress went back at report " << i;
  }
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_LE(seen.back(), 1.0);
  // A pass that ends reports 1: only the last report of the whole join may say "done".
  for (std::size_t i = 0; i + 1 < seen.size(); ++i) {
    EXPECT_LT(seen[i], 1.0) << "report " << i << " of " << seen.size() << " said done early";
  }
}

TEST(progress, a_two_pass_csr_join_climbs_once) {
  const std::vector<double> coords = uniform_points(100000);
  const epsjoin::dataset_view view{coords.data(), coords.size() / 2, 2};
  for (const char* engine : {"cpu-grid", "cpu-rtree"}) {
    SCOPED_TRACE(engine);
    epsjoin::join_options opt;
    opt.eps = 0.01;  // about 30 neighbours a point
    opt.engine = engine;
    std::vector<double> seen;
    opt.progress = [&](double f) { seen.push_back(f); };
    epsjoin::resources res(2);
    epsjoin::csr_sink table;
    epsjoin::self_join(res, view, opt, table);
    expect_one_climb(seen);
  }
}

}  // namespace

namespace {

struct stop_requested {};

// Cancellation is an exception from the progress callback (join_options::progress): every CPU
// engine must let it out of the join, whatever the sink, and stay usable afterwards.
TEST(progress, an_exception_from_progress_stops_the_join_and_leaves_it) {
  const std::vector<double> coords = uniform_points(20000);
  const epsjoin::dataset_view view{coords.data(), coords.size() / 2, 2};
  for (const char* engine : {"brute-cpu", "cpu-grid", "super-ego", "cpu-rtree"}) {
    SCOPED_TRACE(engine);
    epsjoin::join_options opt;
    opt.eps = 0.02;
    opt.engine = engine;
    opt.progress = [](double) { throw stop_requested{}; };
    epsjoin::resources res(2);
    epsjoin::csr_sink table;
    EXPECT_THROW(epsjoin::self_join(res, view, opt, table), stop_requested);
    epsjoin::count_sink counts;
    EXPECT_THROW(epsjoin::self_join(res, view, opt, counts), stop_requested);
    epsjoin::unique_pairs_sink unique;
    EXPECT_THROW(epsjoin::join(res, view, view, opt, unique), stop_requested);
    opt.progress = {};
    epsjoin::count_sink after;
    epsjoin::self_join(res, view, opt, after);
    EXPECT_GT(after.total(), 0u);
  }
}

}  // namespace
