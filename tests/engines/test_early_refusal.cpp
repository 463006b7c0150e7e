// A result kept in memory that cannot fit is refused before the work, on every CPU engine: the
// join estimates it from a sample of its queries (core/result_estimate.hpp) and refuses, with
// the estimate, where even its lower bound is over the limit; nothing of the table is
// allocated. A result that fits is never refused by the estimate. Pairs that arrive are
// bounded as they come (cpu-rtree, brute-cpu), the message saying what arrived is a lower bound.
// Through the public API, at the library's own sample sizes (4096 queries from 65536 on).

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "epsjoin/epsjoin.hpp"
#include "support/seed.hpp"

namespace epsjoin {
namespace {

constexpr std::uint64_t mib = std::uint64_t{1} << 20;
const char* const cpu_engines[] = {"cpu-grid", "super-ego", "cpu-rtree", "brute-cpu"};

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

bool has_note(const join_stats& stats, const std::string& key) {
  for (const auto& [k, v] : stats.notes) {
    if (k == key) return true;
  }
  return false;
}

TEST(early_refusal, a_table_far_over_the_limit_is_refused_from_a_sample_on_every_cpu_engine) {
  const dataset p = points(70000, 0, test::test_seed());
  const dataset q = points(20000, 0, test::test_seed() + 1);
  join_options opt;
  opt.eps = eps_for(p.n(), 100);  // a table of about 28 MiB
  resources res(2);
  res.set_memory({2 * mib, 0});
  for (const char* engine : cpu_engines) {
    SCOPED_TRACE(engine);
    opt.engine = engine;
    csr_sink table;
    const std::string what = refusal([&] { self_join(res, p.view(), opt, table); });
    EXPECT_NE(what.find("the neighbour table needs at least "), std::string::npos) << what;
    EXPECT_NE(what.find("estimated from 4096 sampled queries: about "), std::string::npos) << what;
    EXPECT_NE(what.find("but 2.0 MiB are allowed (the memory limit)"), std::string::npos) << what;
    EXPECT_TRUE(table.table().offsets.empty()) << "the table was allocated before the refusal";
    // Unique pairs are never rows: the result is pairs, 4 bytes each kept.
    unique_pairs_sink unique;
    const std::string pairs = refusal([&] { self_join(res, p.view(), opt, unique); });
    EXPECT_NE(pairs.find("the result needs at least "), std::string::npos) << pairs;
    EXPECT_NE(pairs.find("sampled queries"), std::string::npos) << pairs;
    EXPECT_TRUE(unique.pairs().empty());
    // A x B: the queries are sampled, all of B is joined.
    csr_sink ab;
    const std::string across = refusal([&] { join(res, p.view(), q.view(), opt, ab); });
    EXPECT_NE(across.find("estimated from 4096 sampled queries"), std::string::npos) << across;
  }
}

// The metrics and the periodic box are counted as the join counts them.
TEST(early_refusal, other_geometries_are_estimated_in_their_own_terms) {
  const dataset p = points(70000, 0, test::test_seed());
  resources res(2);
  res.set_memory({2 * mib, 0});
  join_options l1;
  l1.eps = eps_for(p.n(), 100);
  l1.metric = distance_metric::manhattan;
  join_options box;
  box.eps = eps_for(p.n(), 100);
  box.box = {1.0, 1.0};
  for (join_options opt : {l1, box}) {
    for (const char* engine : {"cpu-grid", "super-ego"}) {
      opt.engine = engine;
      csr_sink table;
      const std::string what = refusal([&] { self_join(res, p.view(), opt, table); });
      EXPECT_NE(what.find("estimated from 4096 sampled queries"), std::string::npos)
          << engine << ": " << what;
    }
  }
}

// Exactly the bytes the result needs, or a limit with room for everything beside it: never a
// refusal from the estimate, and with room the join runs and says what it estimated. A dense
// blob holds most of the pairs, so a sample that meets it often would overestimate.
TEST(early_refusal, a_result_that_fits_is_never_refused_by_the_estimate) {
  for (std::size_t blob : {0u, 3000u}) {
    const dataset p = points(70000 + blob, blob, test::test_seed() + blob);
    // Brute force joins all the points against a few thousand, not all of them.
    const dataset few = points(3000, blob / 4, test::test_seed() + 7);
    join_options opt;
    opt.eps = eps_for(p.n(), 8);
    opt.include_self = true;
    for (const char* engine : cpu_engines) {
      SCOPED_TRACE(testing::Message() << engine << ", blob " << blob);
      opt.engine = engine;
      const bool self = std::string(engine) != "brute-cpu";
      const dataset_view data = self ? p.view() : few.view();
      auto run = [&](resources& res, result_sink& sink) {
        return self ? self_join(res, p.view(), opt, sink) : join(res, p.view(), data, opt, sink);
      };
      resources res(2);
      count_sink counts;
      run(res, counts);
      const std::uint64_t ids = counts.total();
      // The table alone, as counted; then room for pairs collected at 12 bytes and the cursors.
      const std::uint64_t table = (p.n() + 1) * 8 + ids * 4;
      res.set_memory({table, 0});
      csr_sink tight;
      const std::string what = refusal([&] { run(res, tight); });
      EXPECT_EQ(what.find("estimated"), std::string::npos) << what;
      res.set_memory({ids * 12 + p.n() * 24 + mib, 0});
      csr_sink roomy;
      const join_stats stats = run(res, roomy);
      EXPECT_EQ(roomy.table().neighbors.size(), ids);
      EXPECT_TRUE(has_note(stats, "result estimate")) << "the estimate did not run";
    }
  }
}

// A sink that keeps 12 bytes a pair and counts what reached it.
class kept_pairs final : public result_sink {
 public:
  void consume(std::span<const index_pair> pairs) override { received += pairs.size(); }
  sink_request request() const override {
    return {.keeps_result_in_memory = true, .bytes_kept_per_pair = 12};
  }
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
    // A file takes the pairs only at its end: until then they are held, and that is what the
    // message names (the file itself needs no memory).
    const std::string path = testing::TempDir() + "early_refusal_pairs.csr";
    {
      csr_file_sink file(path);
      const std::string held = refusal([&] { self_join(res, p.view(), opt, file); });
      EXPECT_NE(held.find("holding the pairs until they are written needs at least "),
                std::string::npos)
          << held;
    }
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace epsjoin
