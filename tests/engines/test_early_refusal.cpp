// Pairs that arrive are bounded as they come (cpu-rtree, brute-cpu), the message saying what
// arrived is a lower bound.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "epsjoin/epsjoin.hpp"
#include "support/seed.hpp"

namespace epsjoin {
namespace {

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

// n points uniform in the unit square, then `blob` points in one spot: a few dense queries that
// hold most of the pairs when the blob is large.
dataset points(std::size_t n, std::size_t blob, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) {
    v.push_back(u(rng));
    v.push_back(u(rng));
  }
  for (std::size_t i = 0; i < blob; ++i) {
    v.push_back(0.25 + 1e-5 * u(rng));
    v.push_back(0.75);
  }
  return dataset(std::move(v), 2);
}

// About `neighbours` neighbours a point among n uniform ones.
double eps_for(std::size_t n, double neighbours) {
  return std::sqrt(neighbours / (3.141592653589793 * static_cast<double>(n)));
}

std::string refusal(const std::function<void()>& join_call) {
  try {
    join_call();
  } catch (const out_of_memory& e) {
    return e.what();
  }
  return "";
}

// A sink that keeps 12 bytes a pair and counts what reached it.
class kept_pairs final : public result_sink {
 public:
  void consume(std::span<const index_pair> pairs) override { received += pairs.size(); }
  bool keeps_result_in_memory() const override { return true; }
  double bytes_kept_per_pair() const override { return 12; }
  std::atomic<std::uint64_t> received{0};
};

// Too few queries for an estimate (it would cost about as much as the count): pairs handed over
// as they are found are stopped once they would pass the limit, none of them kept beyond it, and
// the message gives what arrived as a lower bound, not as what the result needs.
TEST(early_refusal, pairs_are_stopped_at_the_limit_as_they_arrive) {
  const dataset p = points(20000, 0, test::test_seed());
  join_options opt;
  opt.eps = eps_for(p.n(), 50);
  const std::uint64_t limit = 2 * mib;
  for (const char* engine : {"cpu-rtree", "brute-cpu"}) {
    SCOPED_TRACE(engine);
    opt.engine = engine;
    resources res(2);
    res.set_memory({limit, 0});
    kept_pairs sink;
    const std::string what = refusal([&] { self_join(res, p.view(), opt, sink); });
    EXPECT_NE(what.find("the result needs at least "), std::string::npos) << what;
    EXPECT_NE(what.find(" of host memory (its first "), std::string::npos) << what;
    EXPECT_NE(what.find(" pairs, when the join was stopped) but 2.0 MiB are allowed"),
              std::string::npos)
        << what;
    EXPECT_GT(sink.received.load(), 0u);
    EXPECT_LE(sink.received.load() * 12, limit);
  }
}

}  // namespace
}  // namespace epsjoin
