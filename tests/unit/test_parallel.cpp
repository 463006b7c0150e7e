// The parallel helpers of base/parallel.hpp: the blocked exclusive scan against a serial one, with
// blocks small enough that many workers share the input, and sizes around the block boundaries;
// the loop's stop, from an exception or from the progress callback inside long chunks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/parallel.hpp"

namespace {

using epsjoin::detail::exclusive_scan;

TEST(parallel, exclusive_scan_matches_a_serial_scan) {
  std::mt19937 rng(7);
  for (const std::size_t n : {0, 1, 2, 63, 64, 65, 1000, 4097}) {
    for (const std::size_t block : {1, 7, 64, 1 << 16}) {
      std::vector<std::uint32_t> in(n);
      for (auto& x : in) x = rng() % 1000;
      std::vector<std::uint64_t> expected(n + 1, 0), got(n + 1, 12345);
      std::partial_sum(in.begin(), in.end(), expected.begin() + 1,
                       [](std::uint64_t a, std::uint64_t b) { return a + b; });
      exclusive_scan(std::span<const std::uint32_t>(in), std::span<std::uint64_t>(got), 4, block);
      EXPECT_EQ(got, expected) << "n " << n << ", block " << block;
    }
  }
}

using epsjoin::detail::parallel_for;

// Every item exactly once, and no worker number on two threads at once, from several callers at
// the same time (the process's kept workers are shared) with a parallel_for nested in each
// chunk (which must not wait on the workers it runs on).
TEST(parallel, concurrent_and_nested_calls_cover_every_item_once) {
  constexpr std::size_t n = 20000;
  constexpr unsigned threads = 8;
  auto one_caller = [&](std::vector<std::atomic<int>>& seen, std::atomic<bool>& clash) {
    std::vector<std::atomic<int>> busy(threads);
    parallel_for(threads, n, 97, [&](std::size_t b, std::size_t e, unsigned worker) {
      if (busy[worker].fetch_add(1) != 0) clash = true;
      std::atomic<std::size_t> inner{0};
      parallel_for(3, e - b, 16, [&](std::size_t ib, std::size_t ie, unsigned) { inner += ie - ib; });
      if (inner != e - b) clash = true;
      for (std::size_t i = b; i < e; ++i) seen[i].fetch_add(1);
      busy[worker].fetch_sub(1);
    });
  };
  for (int round = 0; round < 5; ++round) {
    std::vector<std::vector<std::atomic<int>>> seen;
    for (int c = 0; c < 4; ++c) seen.emplace_back(n);
    std::atomic<bool> clash{false};
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c) callers.emplace_back(one_caller, std::ref(seen[c]), std::ref(clash));
    for (auto& t : callers) t.join();
    EXPECT_FALSE(clash.load());
    for (int c = 0; c < 4; ++c) {
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[c][i].load(), 1) << "caller " << c << ", item " << i;
    }
  }
}

TEST(parallel, the_first_exception_stops_the_loop_and_reaches_the_caller) {
  for (int round = 0; round < 20; ++round) {
    EXPECT_THROW(parallel_for(6, 100000, 10,
                              [&](std::size_t b, std::size_t, unsigned) {
                                if (b == 500) throw std::runtime_error("stop");
                              }),
                 std::runtime_error);
    // The workers stop taking chunks soon after the throw; the pool is usable afterwards.
    std::atomic<std::size_t> sum{0};
    parallel_for(6, 1000, 1, [&](std::size_t b, std::size_t e, unsigned) { sum += e - b; });
    EXPECT_EQ(sum.load(), 1000u);
  }
}

// A callback that throws once `after` has passed: how Python's Ctrl-C reaches a join.
struct stop_after {
  std::chrono::steady_clock::time_point at;
  void operator()(double) const {
    if (std::chrono::steady_clock::now() >= at) throw std::runtime_error("cancelled");
  }
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Chunks of seconds each (a dense cell, a super-ego work item): the callback is called from
// inside them, and every worker stops at its next cancellation point.
TEST(parallel, a_throwing_progress_stops_long_chunks_at_their_cancellation_points) {
  using namespace std::chrono;
  for (const unsigned threads : {1u, 2u, 4u}) {
    const auto start = steady_clock::now();
    const std::function<void(double)> progress = stop_after{start + milliseconds(200)};
    std::atomic<unsigned> stopped_inside{0};
    EXPECT_THROW(parallel_for(threads, 8, 1,
                              [&](std::size_t, std::size_t, unsigned) {
                                const auto chunk_start = steady_clock::now();
                                try {
                                  while (steady_clock::now() - chunk_start < seconds(5)) {
                                    epsjoin::detail::cancellation_point();
                                  }
                                } catch (...) {
                                  ++stopped_inside;
                                  throw;
                                }
                              },
                              progress),
                 std::runtime_error);
    EXPECT_LT(seconds_since(start), 0.5) << threads << " threads";
    // A worker that had not begun its chunk by then takes none; the others stop inside theirs
    // (else the loop would have taken 5 s).
    EXPECT_GE(stopped_inside.load(), 1u);
  }
}

// The caller ran out of chunks while another worker still runs a long one: the caller keeps
// calling the callback, and its throw stops that worker.
TEST(parallel, the_caller_still_reports_while_the_last_chunks_run) {
  using namespace std::chrono;
  const auto start = steady_clock::now();
  const std::function<void(double)> progress = stop_after{start + milliseconds(300)};
  EXPECT_THROW(parallel_for(2, 2, 1,
                            [&](std::size_t b, std::size_t, unsigned) {
                              const auto chunk_start = steady_clock::now();
                              const auto length = b == 0 ? milliseconds(1) : seconds(5);
                              while (steady_clock::now() - chunk_start < length) {
                                epsjoin::detail::cancellation_point();
                              }
                            },
                            progress),
               std::runtime_error);
  EXPECT_LT(seconds_since(start), 0.6);
}

// A loop without a callback, nested in one with a callback, stops with the outer loop.
TEST(parallel, a_nested_loop_stops_with_the_loop_around_it) {
  using namespace std::chrono;
  const auto start = steady_clock::now();
  const std::function<void(double)> progress = stop_after{start + milliseconds(200)};
  EXPECT_THROW(parallel_for(1, 1, 1,
                            [&](std::size_t, std::size_t, unsigned) {
                              parallel_for(1, 1000, 1, [&](std::size_t, std::size_t, unsigned) {
                                std::this_thread::sleep_for(milliseconds(10));
                                epsjoin::detail::cancellation_point();
                              });
                            },
                            progress),
               std::runtime_error);
  EXPECT_LT(seconds_since(start), 0.5);
  // Outside any loop, a cancellation point does nothing.
  EXPECT_NO_THROW(epsjoin::detail::cancellation_point());
}

// A join's serial stretches (the sink's row sort): loops without a callback of their own ask the
// scope's between the caller's chunks.
TEST(parallel, loops_without_a_callback_stop_in_a_progress_scope) {
  using namespace std::chrono;
  const auto start = steady_clock::now();
  EXPECT_THROW(
      {
        const epsjoin::detail::progress_scope heard(stop_after{start + milliseconds(200)});
        parallel_for(2, 1000, 1, [&](std::size_t, std::size_t, unsigned) {
          std::this_thread::sleep_for(milliseconds(10));
        });
      },
      std::runtime_error);
  EXPECT_LT(seconds_since(start), 0.5);
  // Without the scope the same loop runs to its end.
  std::atomic<std::size_t> ran{0};
  parallel_for(2, 20, 1, [&](std::size_t, std::size_t, unsigned) { ++ran; });
  EXPECT_EQ(ran.load(), 20u);
}

}  // namespace
