// hegjoin's work deque (src/hetero/work_deque.hpp): takes from both ends, degenerate sizes, and a
// stress test with a fake GPU consumer taking heavy batches while CPU threads take light chunks,
// checking that every item is handed out exactly once and each side's items are contiguous from
// its end. Built into the unit tests; scripts/tsan-deque.sh runs it under ThreadSanitizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "hetero/work_deque.hpp"

namespace {

using epsjoin::detail::hetero::item_range;
using epsjoin::detail::hetero::work_deque;

TEST(work_deque, ends_meet_without_overlap) {
  work_deque q(10);
  const item_range a = q.take_front(3);
  EXPECT_EQ(a.begin, 0u);
  EXPECT_EQ(a.end, 3u);
  const item_range b = q.take_back(4);
  EXPECT_EQ(b.begin, 6u);
  EXPECT_EQ(b.end, 10u);
  EXPECT_EQ(q.remaining(), 3u);
  const item_range c = q.take_back(5);  // asks for more than is left: gets the rest
  EXPECT_EQ(c.begin, 3u);
  EXPECT_EQ(c.end, 6u);
  EXPECT_TRUE(q.take_front(1).empty());
  EXPECT_TRUE(q.take_back(1).empty());
  EXPECT_EQ(q.remaining(), 0u);
  EXPECT_EQ(q.front(), 3u);
}

TEST(work_deque, degenerate_sizes) {
  work_deque empty(0);
  EXPECT_TRUE(empty.take_front(5).empty());
  EXPECT_TRUE(empty.take_back(5).empty());
  work_deque one(1);
  const item_range only = one.take_back(1024);
  EXPECT_EQ(only.size(), 1u);
  EXPECT_EQ(only.begin, 0u);
  EXPECT_TRUE(one.take_front(1).empty());
  EXPECT_THROW(one.take_front(0), epsjoin::invalid_argument);
}

// A fake GPU consumer takes batches of `gpu_batch` from the front while `cpu_threads` threads take
// chunks of `cpu_chunk` from the back, with no pause, many times over.
void stress(std::uint32_t n, unsigned cpu_threads, std::uint32_t gpu_batch,
            std::uint32_t cpu_chunk) {
  work_deque q(n);
  std::vector<std::atomic<std::uint8_t>> taken(n);
  std::atomic<std::uint32_t> gpu_last_end{0}, cpu_lowest_begin{n};
  auto mark = [&](const item_range& r) {
    for (std::uint32_t i = r.begin; i < r.end; ++i)
      taken[i].fetch_add(1, std::memory_order_relaxed);
  };
  std::thread gpu([&] {
    std::uint32_t expected_begin = 0;
    for (item_range r = q.take_front(gpu_batch); !r.empty(); r = q.take_front(gpu_batch)) {
      // The front's takes follow one another without gaps.
      EXPECT_EQ(r.begin, expected_begin);
      expected_begin = r.end;
      mark(r);
    }
    gpu_last_end = expected_begin;
  });
  std::vector<std::thread> cpus;
  for (unsigned t = 0; t < cpu_threads; ++t) {
    cpus.emplace_back([&] {
      for (item_range r = q.take_back(cpu_chunk); !r.empty(); r = q.take_back(cpu_chunk)) {
        mark(r);
        std::uint32_t low = cpu_lowest_begin.load();
        while (r.begin < low && !cpu_lowest_begin.compare_exchange_weak(low, r.begin)) {
        }
      }
    });
  }
  gpu.join();
  for (auto& t : cpus) t.join();
  for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(taken[i].load(), 1) << "item " << i;
  // The two sides split the items at one point: the GPU's are a prefix, the CPUs' the rest.
  EXPECT_EQ(gpu_last_end.load(), q.front());
  if (n > 0) {
    EXPECT_EQ(std::min(cpu_lowest_begin.load(), n), gpu_last_end.load());
  }
}

TEST(work_deque, every_item_once_under_contention) {
  stress(200000, 8, 64, 16);
  stress(100000, 3, 1, 1);
  stress(5, 16, 2, 1024);  // more CPU threads than items
  stress(1, 4, 1, 1);
  stress(0, 2, 8, 8);
  stress(70000, 1, 100000, 1);  // the GPU can take everything in one batch
}

}  // namespace
