// hegjoin's CPU side without a GPU (src/hetero/split_join.hpp): a fake GPU thread takes batches
// from the deque's front while the CPU workers join chunks from its back, on a hand-made index in
// which every item is one query and its one range is the whole data set (a brute-force join).
// Under halving all points are one cell and item i is position n - 1 - i, so its range is the
// positions after it and the CPU's items own pairs with the GPU's: its reverse hits land in the
// GPU's rows. Checks, for each partition strategy and the degenerate splits, that the GPU's items
// are a prefix, that the CPU computes exactly the rest, once each, with the neighbours a direct
// computation finds, that counts and delivered rows agree, and that many jobs at once stay
// correct. scripts/tsan-deque.sh runs this file under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "hetero/split_join.hpp"

namespace {

using namespace epsjoin::detail::hetero;

struct fake_join {
  std::size_t n = 0;
  bool halving = false;
  int d = 3;
  double eps2 = 0;
  std::vector<double> points;
  std::vector<std::uint32_t> ids;  // position -> caller's id (reversed, so ids differ)
  std::vector<host_item> items;
  std::vector<std::uint64_t> candidates;

  fake_join(std::size_t points_n, std::uint64_t seed, bool halves = false, int dims = 3)
      : n(points_n), halving(halves), d(dims) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    points.resize(n * d);
    for (double& x : points) x = u(rng);
    // Every seventh point repeats the one before: neighbours at distance 0 that are not the
    // point itself.
    for (std::size_t i = 7; i < n; i += 7) {
      std::copy_n(points.begin() + static_cast<std::ptrdiff_t>((i - 1) * d), d,
                  points.begin() + static_cast<std::ptrdiff_t>(i * d));
    }
    // About as many neighbours per point in any d as 0.15 gives in 3.
    eps2 = 0.15 * 0.15 * (d <= 3 ? 1.0 : d * d / 4.0);
    for (std::size_t i = 0; i < n; ++i) {
      ids.push_back(static_cast<std::uint32_t>(n - 1 - i));
      if (halving) {
        items.push_back({position_of(i), 1, 0});
        candidates.push_back(n - 1 - position_of(i));
      } else {
        items.push_back({static_cast<std::uint32_t>(i), 1, static_cast<std::uint32_t>(i)});
        candidates.push_back(n);
      }
    }
  }

  host_join_view<double> view() const {
    host_join_view<double> v;
    v.items = items;
    v.query_points = points;
    v.query_ids = ids;
    v.data_points = points;
    v.data_ids = ids;
    v.d = d;
    v.eps2 = eps2;
    v.self_join = true;
    v.halving = halving;
    return v;
  }

  /// The query position of item i.
  std::uint32_t position_of(std::size_t i) const {
    return static_cast<std::uint32_t>(halving ? n - 1 - i : i);
  }

  range_fetcher fetcher() const {
    return [this](std::uint32_t lo, std::uint32_t hi, std::vector<host_range>& ranges,
                  std::vector<std::uint32_t>& counts) {
      counts.assign(hi - lo, 1);
      ranges.clear();
      for (std::uint32_t i = lo; i < hi; ++i) {
        // Halving: the own cell from the item's first query's successor on.
        ranges.push_back(halving ? host_range{position_of(i) + 1, static_cast<std::uint32_t>(n)}
                                 : host_range{0, static_cast<std::uint32_t>(n)});
      }
    };
  }

  /// Neighbours of position p (caller's ids), computed as the GPU's tiled kernel rounds; with
  /// `cpu_items_from`, only those of the pairs the CPU computes (halving: the pair's owner, its
  /// lower position, is an item from there on; otherwise p is).
  std::vector<std::uint32_t> neighbours(std::uint32_t p, std::uint32_t cpu_items_from = 0) const {
    auto cpu_item = [&](std::uint32_t q) { return (halving ? n - 1 - q : q) >= cpu_items_from; };
    std::vector<std::uint32_t> out;
    for (std::uint32_t j = 0; j < n; ++j) {
      if (j == p) continue;
      if (!cpu_item(halving ? std::min(p, j) : p)) continue;
      double sum = 0;
      for (int k = 0; k < d; ++k) {
        const double diff = points[p * d + k] - points[j * d + k];
        sum = std::fma(diff, diff, sum);
      }
      if (sum <= eps2) out.push_back(ids[j]);
    }
    return out;
  }
};

/// Runs one shared join with a fake GPU; returns the items the GPU took, in order. `early`:
/// dynamic partitioning planned before the items are known (plan_dynamic), as hegjoin does.
/// `pause`: the GPU's first batch is reported done at once, 50 ms before the workers start, so its
/// rate seems far beyond theirs; then the GPU waits this long before it goes on.
std::vector<std::uint32_t> run_shared(const fake_join& job, split_join<double>& share,
                                      bool early = false,
                                      std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
  if (early) {
    std::uint64_t total = 0;
    for (const std::uint64_t c : job.candidates) total += c;
    share.plan_dynamic(static_cast<std::uint32_t>(job.n), job.n, total, 2);
  } else {
    share.plan(job.items, job.candidates, 2);
  }
  std::vector<std::uint32_t> gpu_items;
  auto take = [&] {
    const item_range r = share.next_gpu_batch();
    for (std::uint32_t i = r.begin; i < r.end; ++i) gpu_items.push_back(i);
    return r;
  };
  if (pause.count() > 0) {
    // Before any worker starts: the first batch reported done within microseconds, then time
    // passes, so the GPU is taken to be far ahead of any worker.
    share.gpu_progress(take().end);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::thread gpu([&] {
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    while (!take().empty()) {
    }
    share.gpu_finished();
  });
  if (early) share.workload(job.items, job.candidates);
  share.start(job.view(), job.fetcher());
  gpu.join();
  share.wait();
  return gpu_items;
}

/// `cpu_out`: where the CPU's totals go (when given).
void check_split_once(const fake_join& job, const share_settings& settings, const char* what,
                      bool early, std::chrono::milliseconds pause, side_totals* cpu_out) {
  SCOPED_TRACE(what);
  split_join<double> share(settings);
  const std::vector<std::uint32_t> gpu_items = run_shared(job, share, early, pause);
  const std::uint32_t g = share.gpu_items();
  ASSERT_EQ(gpu_items.size(), g);
  for (std::uint32_t i = 0; i < g; ++i) ASSERT_EQ(gpu_items[i], i) << "GPU items are a prefix";

  const std::vector<std::uint32_t> counts =
      share.counts_by_position(static_cast<std::uint32_t>(job.n));
  // Rows delivered into a table laid out from the counts, as a row sink would, after a GPU part
  // of p % 3 places that the CPU must leave alone.
  std::vector<std::uint32_t> gpu_part(job.n);
  for (std::size_t p = 0; p < job.n; ++p) gpu_part[p] = static_cast<std::uint32_t>(p % 3);
  std::vector<std::uint64_t> starts(job.n, 0);
  std::uint64_t total = 0;
  for (std::size_t p = 0; p < job.n; ++p) {
    starts[job.ids[p]] = total;
    total += counts[p] + gpu_part[p];
  }
  std::vector<std::uint32_t> table(total, ~0u);
  share.deliver_rows({table.data(), starts.data()}, gpu_part, 3);
  for (std::size_t p = 0; p < job.n; ++p) {
    for (std::uint32_t k = 0; k < gpu_part[p]; ++k) {
      ASSERT_EQ(table[starts[job.ids[p]] + k], ~0u) << "the CPU wrote the GPU's part of row " << p;
    }
  }
  std::uint64_t cpu_candidates = 0, gpu_candidates = 0;
  for (std::uint32_t i = 0; i < job.n; ++i)
    (i < g ? gpu_candidates : cpu_candidates) += job.candidates[i];
  std::uint32_t reverse_hits_in_gpu_rows = 0;
  for (std::uint32_t p = 0; p < job.n; ++p) {
    std::vector<std::uint32_t> expected = job.neighbours(p, g);
    if (!job.halving && job.position_of(p) < g) {
      EXPECT_EQ(counts[p], 0u) << "the CPU computed a GPU row, position " << p;
    }
    if (job.halving && job.n - 1 - p < g) reverse_hits_in_gpu_rows += counts[p];
    ASSERT_EQ(counts[p], expected.size()) << "position " << p;
    const std::uint64_t cpu_start = starts[job.ids[p]] + gpu_part[p];
    std::vector<std::uint32_t> got(
        table.begin() + static_cast<std::ptrdiff_t>(cpu_start),
        table.begin() + static_cast<std::ptrdiff_t>(cpu_start + counts[p]));
    std::sort(got.begin(), got.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(got, expected) << "position " << p;
  }
  const side_totals cpu = share.cpu();
  if (cpu_out != nullptr) *cpu_out = cpu;
  EXPECT_EQ(cpu.items, job.n - g);
  EXPECT_EQ(cpu.queries, job.n - g);
  EXPECT_EQ(cpu.candidates, cpu_candidates);
  EXPECT_EQ(share.gpu().candidates, gpu_candidates);
  // Where both sides had items, the CPU's owned pairs reached GPU rows (the data are dense).
  if (job.halving && g > 10 && job.n - g > 10) {
    EXPECT_GT(reverse_hits_in_gpu_rows, 0u);
  }
}

/// Under halving, both ways of delivering the reverse hits (each straight to its row, or grouped
/// by row first), whichever the hit count would choose.
void check_split(const fake_join& job, share_settings settings, const char* what,
                 bool early = false, std::chrono::milliseconds pause = std::chrono::milliseconds(0),
                 side_totals* cpu_out = nullptr) {
  if (!job.halving) {
    check_split_once(job, settings, what, early, pause, cpu_out);
    return;
  }
  for (const reverse_delivery way : {reverse_delivery::direct, reverse_delivery::grouped}) {
    SCOPED_TRACE(way == reverse_delivery::direct ? "reverse hits direct" : "reverse hits grouped");
    settings.delivery = way;
    check_split_once(job, settings, what, early, pause, cpu_out);
  }
}

share_settings settings(partition_strategy strategy, double fraction, unsigned threads,
                        std::uint32_t chunk, std::uint32_t batch_items) {
  share_settings s;
  s.strategy = strategy;
  s.gpu_fraction = fraction;
  s.cpu_threads = threads;
  s.cpu_chunk_queries = chunk;
  s.min_batch_items = batch_items;
  return s;
}

TEST(split_join, every_strategy_covers_each_row_once) {
  const fake_join job(700, 11);
  check_split(job, settings(partition_strategy::dynamic, 1, 4, 8, 16), "dynamic");
  check_split(job, settings(partition_strategy::dynamic, 1, 4, 1, 1), "dynamic, tiny takes");
  check_split(job, settings(partition_strategy::dynamic, 1, 0, 8, 16), "dynamic, no CPU");
  check_split(job, settings(partition_strategy::static_queries, 0.5, 3, 16, 4), "queries 0.5");
  check_split(job, settings(partition_strategy::static_candidates, 0.3, 3, 16, 4),
              "candidates 0.3");
  check_split(job, settings(partition_strategy::static_candidates, 0, 2, 64, 4), "all to CPU");
  check_split(job, settings(partition_strategy::static_queries, 1, 2, 64, 4), "all to GPU");
  check_split(job, settings(partition_strategy::dynamic, 1, 64, 1, 1000), "more workers than rows");
}

// Dynamic partitioning planned before the items reach the host: GPU batches by item count.
TEST(split_join, dynamic_plan_before_the_items) {
  for (const bool halves : {false, true}) {
    const fake_join job(700, 31, halves);
    SCOPED_TRACE(halves ? "halving" : "full");
    check_split(job, settings(partition_strategy::dynamic, 1, 4, 8, 16), "dynamic", true);
    check_split(job, settings(partition_strategy::dynamic, 1, 4, 1, 1), "tiny takes", true);
    check_split(job, settings(partition_strategy::dynamic, 1, 0, 8, 16), "no CPU", true);
    check_split(job, settings(partition_strategy::dynamic, 1, 64, 1, 1000), "many workers", true);
  }
  const fake_join none(0, 4);
  check_split(none, settings(partition_strategy::dynamic, 1, 4, 1, 1), "no rows", true);
  // The GPU took everything before the CPU side had the items: the totals stand for the shares.
  const fake_join job(300, 9);
  split_join<double> share(settings(partition_strategy::dynamic, 1, 4, 8, 16));
  share.plan_dynamic(300, 300, 300 * 300, 2);
  while (!share.next_gpu_batch().empty()) {
  }
  share.gpu_finished();
  share.wait();
  EXPECT_EQ(share.gpu().candidates, 300u * 300u);
  EXPECT_EQ(share.gpu().queries, 300u);
  EXPECT_EQ(share.cpu().items, 0u);
  split_join<double> other(settings(partition_strategy::static_queries, 0.5, 4, 8, 16));
  EXPECT_THROW(other.plan_dynamic(300, 300, 1, 2), epsjoin::invalid_argument);
}

// Dynamic partitioning with a GPU that seems to finish half the join within microseconds, then
// pauses: each worker measures one chunk, expects its next to end after the GPU would have
// finished, and leaves the rest to the GPU; without cpu_yields the workers take the rest.
TEST(split_join, workers_leave_the_rest_to_a_faster_gpu) {
  const auto pause = std::chrono::milliseconds(200);
  for (const bool halves : {false, true}) {
    const fake_join job(2000, 47, halves);
    SCOPED_TRACE(halves ? "halving" : "full");
    // The GPU's first batch is half the items.
    share_settings s = settings(partition_strategy::dynamic, 1, 4, 8, 1000);
    side_totals cpu;
    check_split(job, s, "yielding", false, pause, &cpu);
    EXPECT_GT(cpu.items, 0u) << "every worker takes its first chunk";
    EXPECT_LE(cpu.items, 4u * 8u) << "and no second one";
    s.cpu_yields = false;
    check_split(job, s, "not yielding", false, pause, &cpu);
    EXPECT_GT(cpu.items, 4u * 8u);
  }
}

TEST(split_join, halving_writes_both_rows_of_each_pair_once) {
  const fake_join job(700, 12, true);
  check_split(job, settings(partition_strategy::dynamic, 1, 4, 8, 16), "dynamic");
  check_split(job, settings(partition_strategy::dynamic, 1, 4, 1, 1), "dynamic, tiny takes");
  check_split(job, settings(partition_strategy::static_queries, 0.5, 3, 16, 4), "queries 0.5");
  check_split(job, settings(partition_strategy::static_candidates, 0, 2, 64, 4), "all to CPU");
  check_split(job, settings(partition_strategy::static_queries, 1, 2, 64, 4), "all to GPU");
  check_split(job, settings(partition_strategy::dynamic, 1, 64, 1, 1000), "more workers than rows");
  const fake_join one(1, 3, true);
  check_split(one, settings(partition_strategy::static_candidates, 0, 4, 1, 1), "one row, CPU");
}

// The super-ego side (cpu_engine=super-ego) against the same direct computation: its own EGO
// index, hits confirmed with the grid side's rounding, in the unrolled (d = 3) and any-d (d = 12)
// leaf loops, with index leaves small enough that the recursion runs deep.
TEST(split_join, super_ego_side_finds_the_grid_sides_rows) {
  for (const int d : {3, 12}) {
    const fake_join job(700, 21 + d, false, d);
    for (const std::size_t query_leaf : {1, 8}) {
      auto ego = [&](share_settings s) {
        s.cpu_engine = cpu_engine_kind::super_ego;
        s.ego.leaf = 16;
        s.ego.query_leaf = query_leaf;
        return s;
      };
      SCOPED_TRACE(testing::Message() << "d " << d << ", query leaf " << query_leaf);
      check_split(job, ego(settings(partition_strategy::dynamic, 1, 4, 8, 16)), "dynamic");
      check_split(job, ego(settings(partition_strategy::static_queries, 0.5, 3, 16, 4)),
                  "queries 0.5");
      check_split(job, ego(settings(partition_strategy::static_candidates, 0, 2, 64, 4)),
                  "all to CPU");
      check_split(job, ego(settings(partition_strategy::dynamic, 1, 64, 1, 1000)),
                  "more workers than rows");
    }
  }
  const fake_join one(1, 3);
  share_settings s = settings(partition_strategy::static_candidates, 0, 4, 1, 1);
  s.cpu_engine = cpu_engine_kind::super_ego;
  check_split(one, s, "one row, CPU");
}

TEST(split_join, super_ego_side_refuses_halving) {
  const fake_join job(50, 5, true);
  share_settings s = settings(partition_strategy::static_candidates, 0, 2, 8, 4);
  s.cpu_engine = cpu_engine_kind::super_ego;
  split_join<double> share(s);
  share.plan(job.items, job.candidates, 2);
  EXPECT_THROW(share.start(job.view(), job.fetcher()), epsjoin::invalid_argument);
}

TEST(split_join, degenerate_sizes) {
  const fake_join one(1, 3), none(0, 4);
  check_split(one, settings(partition_strategy::dynamic, 1, 4, 1, 1), "one row");
  check_split(one, settings(partition_strategy::static_candidates, 0, 4, 1, 1), "one row, CPU");
  check_split(none, settings(partition_strategy::dynamic, 1, 4, 1, 1), "no rows");
}

// The driver abandons the CPU side when the GPU empties the deque before the workers could start:
// the share then has no rows, delivers nothing, and counts nothing.
TEST(split_join, workers_never_started) {
  const fake_join job(300, 9, true);
  split_join<double> share(settings(partition_strategy::dynamic, 1, 4, 8, 16));
  share.plan(job.items, job.candidates, 2);
  while (!share.next_gpu_batch().empty()) {
  }
  EXPECT_FALSE(share.cpu_work_left());
  share.gpu_finished();
  share.wait();
  EXPECT_EQ(share.gpu_items(), job.n);
  const std::vector<std::uint32_t> counts = share.counts_by_position(300);
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 0u), 300);
  std::vector<std::uint32_t> gpu_part(300, 2), table(600, 7);
  std::vector<std::uint64_t> starts(300);
  for (std::size_t p = 0; p < 300; ++p) starts[p] = 2 * p;
  share.deliver_rows({table.data(), starts.data()}, gpu_part, 2);
  EXPECT_EQ(std::count(table.begin(), table.end(), 7u), 600);
  EXPECT_THROW(share.counts_by_position(300), epsjoin::invalid_argument) << "after the delivery";
  EXPECT_EQ(share.cpu().queries, 0u);
}

TEST(split_join, static_split_without_workers_is_an_error) {
  const fake_join job(50, 5);
  split_join<double> share(settings(partition_strategy::static_queries, 0.5, 0, 8, 4));
  EXPECT_THROW(share.plan(job.items, job.candidates, 2), epsjoin::invalid_argument);
}

// Many shared joins at once, each with its own fake GPU and workers.
TEST(split_join, concurrent_jobs_stay_correct) {
  std::vector<std::thread> jobs;
  std::atomic<int> failures{0};
  for (int t = 0; t < 6; ++t) {
    jobs.emplace_back([t, &failures] {
      const fake_join job(300 + 50 * t, 100 + t, t % 2 == 1);
      for (int k = 0; k < 3; ++k) {
        split_join<double> share(
            settings(k == 1 ? partition_strategy::static_queries : partition_strategy::dynamic, 0.4,
                     3, static_cast<std::uint32_t>(1 + 5 * k), 2));
        const std::vector<std::uint32_t> gpu_items = run_shared(job, share, k == 2);
        const std::vector<std::uint32_t> counts =
            share.counts_by_position(static_cast<std::uint32_t>(job.n));
        const std::uint32_t g = share.gpu_items();
        if (gpu_items.size() != g) ++failures;
        for (std::uint32_t p = 0; p < job.n; ++p) {
          if (counts[p] != job.neighbours(p, g).size()) ++failures;
        }
      }
    });
  }
  for (std::thread& j : jobs) j.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
