#include "support/share_check.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::test {

namespace {

struct counted {
  std::vector<std::uint64_t> per_point;
  std::uint64_t total = 0;
};

counted count_join(const std::string& engine, const dataset& points, const dataset* queries,
                   double eps, work_items_share share, bool include_self, unsigned threads) {
  resources res(threads);
  join_options options;
  options.eps = eps;
  options.engine = engine;
  options.include_self = include_self;
  options.share = share;
  count_sink counts(true);
  if (queries != nullptr) {
    join(res, queries->view(), points.view(), options, counts);
  } else {
    self_join(res, points.view(), options, counts);
  }
  return {{counts.per_point().begin(), counts.per_point().end()}, counts.total()};
}

}  // namespace

void expect_shares_add_up(const std::string& engine, const dataset& points, const dataset* queries,
                          double eps, const std::vector<unsigned>& share_counts,
                          bool include_self) {
  const counted oracle = count_join("brute-cpu", points, queries, eps, {}, include_self, 2);
  ASSERT_GT(oracle.total, 0u) << "a case without pairs checks nothing";
  for (unsigned count : share_counts) {
    counted sum;
    sum.per_point.assign(oracle.per_point.size(), 0);
    for (unsigned index = 0; index < count; ++index) {
      const counted part = count_join(engine, points, queries, eps, {index, count}, include_self,
                                      1 + index % 2);
      ASSERT_EQ(part.per_point.size(), sum.per_point.size());
      for (std::size_t p = 0; p < part.per_point.size(); ++p) sum.per_point[p] += part.per_point[p];
      sum.total += part.total;
    }
    EXPECT_EQ(sum.total, oracle.total) << engine << ", " << count << " shares";
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t p = 0; p < oracle.per_point.size(); ++p) {
      if (sum.per_point[p] != oracle.per_point[p] && wrong++ == 0) first_wrong = p;
    }
    EXPECT_EQ(wrong, 0u) << engine << ", " << count << " shares: point " << first_wrong
                         << " counted " << sum.per_point[first_wrong] << " times, the oracle "
                         << oracle.per_point[first_wrong];
  }
}

}  // namespace epsjoin::test
