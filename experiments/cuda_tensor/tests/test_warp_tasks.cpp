// cuda-tensor's design=warps tasks (warp_tasks.hpp), on random launches: every item in
// exactly one slot of its kind's warps, a shared task's items all of its cell, the kinds kept
// when the filling pass cuts the items into other launches, and the warps' proportion kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "cuda_tensor/warp_tasks.hpp"

namespace {

using epsjoin::detail::hetero::build_warp_tasks;
using epsjoin::detail::hetero::item_kind;
using epsjoin::detail::hetero::no_shared_cell;
using epsjoin::detail::hetero::tensor_warps_for;
using epsjoin::detail::hetero::warp_tasks;

struct item {
  std::uint32_t first, count, cell;
};

constexpr unsigned slots = 8;

/// Cells of 1 to max_queries queries, cut into items of up to 32, in a shuffled order.
std::vector<item> random_items(std::mt19937& rng, std::uint32_t cells, std::uint32_t max_queries) {
  std::vector<item> items;
  std::uint32_t first = 0;
  std::uniform_int_distribution<std::uint32_t> queries(1, max_queries);
  for (std::uint32_t c = 0; c < cells; ++c) {
    const std::uint32_t n = queries(rng);
    for (std::uint32_t q = 0; q < n; q += 32) items.push_back({first + q, std::min(32u, n - q), c});
    first += n;
  }
  std::shuffle(items.begin(), items.end(), rng);
  return items;
}

std::vector<std::uint64_t> unit_work(const std::vector<item>& items) {
  std::vector<std::uint64_t> work;
  for (const item& i : items) work.push_back(i.count);
  return work;
}

/// Checks one launch's tasks; returns each item's kind by first position.
std::map<std::uint32_t, item_kind> check_tasks(const warp_tasks<item>& tasks,
                                               const std::vector<item>& items,
                                               unsigned tensor_warps) {
  EXPECT_EQ(tasks.slots.size(), std::size_t{tasks.tasks()} * slots);
  std::map<std::uint32_t, item_kind> seen;
  std::uint64_t shared = 0, busy = 0;
  for (std::uint32_t t = 0; t < tasks.tasks(); ++t) {
    std::set<std::uint32_t> cells;
    unsigned in_task = 0;
    for (unsigned s = 0; s < slots; ++s) {
      const item& it = tasks.slots[t * slots + s];
      if (it.count == 0) continue;
      ++in_task;
      cells.insert(it.cell);
      const item_kind kind = s < tensor_warps ? item_kind::tensor : item_kind::cuda;
      EXPECT_TRUE(seen.emplace(it.first, kind).second) << "item " << it.first << " twice";
    }
    EXPECT_GT(in_task, 0u) << "task " << t << " is empty";
    busy += in_task;
    if (tasks.shared_cell[t] != no_shared_cell) {
      ++shared;
      EXPECT_GE(in_task, 2u) << "a shared task of one item";
      EXPECT_EQ(cells, std::set<std::uint32_t>{tasks.shared_cell[t]}) << "task " << t;
    }
  }
  EXPECT_EQ(seen.size(), items.size());
  for (const item& it : items) EXPECT_EQ(seen.count(it.first), 1u) << "item " << it.first;
  EXPECT_EQ(tasks.shared_tasks, shared);
  EXPECT_EQ(tasks.busy_slots, busy);
  return seen;
}

TEST(warp_tasks, every_item_once_in_a_warp_of_its_kind_and_shared_tasks_of_one_cell) {
  std::mt19937 rng(7);
  for (unsigned tensor_warps = 0; tensor_warps <= slots; ++tensor_warps) {
    for (const std::uint32_t max_queries : {1u, 40u, 300u, 1000u}) {
      SCOPED_TRACE(testing::Message() << tensor_warps << " tensor warps, cells to " << max_queries);
      const auto items = random_items(rng, 200, max_queries);
      std::vector<item_kind> kinds(200 * max_queries + 1, item_kind::unset);
      const auto tasks =
          build_warp_tasks<item>(items, unit_work(items), tensor_warps, slots, kinds);
      check_tasks(tasks, items, tensor_warps);
      if (max_queries >= 300) {
        EXPECT_GT(tasks.shared_tasks, 0u);
      } else if (max_queries == 1) {
        EXPECT_EQ(tasks.shared_tasks, 0u);
      }
    }
  }
}

// The filling pass sees the same items in other launches (segments of positions, each in its
// own order): each item keeps the kind the counting pass gave it.
TEST(warp_tasks, kinds_are_kept_when_the_items_come_in_other_launches) {
  std::mt19937 rng(11);
  for (const unsigned tensor_warps : {1u, 3u, 4u, 7u}) {
    SCOPED_TRACE(tensor_warps);
    const auto items = random_items(rng, 300, 200);
    std::vector<item_kind> kinds(300 * 200 + 1, item_kind::unset);
    const auto counted =
        check_tasks(build_warp_tasks<item>(items, unit_work(items), tensor_warps, slots, kinds),
                    items, tensor_warps);
    std::vector<item> sorted = items;
    std::sort(sorted.begin(), sorted.end(),
              [](const item& a, const item& b) { return a.first < b.first; });
    for (std::size_t begin = 0; begin < sorted.size();) {
      const std::size_t end = std::min(sorted.size(), begin + 1 + rng() % 97);
      std::vector<item> launch(sorted.begin() + begin, sorted.begin() + end);
      std::shuffle(launch.begin(), launch.end(), rng);
      const auto filled =
          check_tasks(build_warp_tasks<item>(launch, unit_work(launch), tensor_warps, slots, kinds),
                      launch, tensor_warps);
      for (const auto& [first, kind] : filled) EXPECT_EQ(kind, counted.at(first)) << first;
      begin = end;
    }
  }
}

// The tensor cores get about tensor_warps / slots of the items, whether cells hold one item,
// a few or many; and a share maps to warps with each side kept while it has work.
TEST(warp_tasks, the_warps_proportion_is_kept) {
  std::mt19937 rng(3);
  for (const std::uint32_t max_queries : {1u, 100u, 1000u}) {
    for (const unsigned tensor_warps : {2u, 4u, 6u}) {
      const auto items = random_items(rng, 2000, max_queries);
      std::vector<item_kind> kinds(2000 * max_queries + 1, item_kind::unset);
      const auto tasks =
          build_warp_tasks<item>(items, unit_work(items), tensor_warps, slots, kinds);
      const auto by_first = check_tasks(tasks, items, tensor_warps);
      const auto tensor = std::count_if(by_first.begin(), by_first.end(), [](const auto& kv) {
        return kv.second == item_kind::tensor;
      });
      const double fraction = static_cast<double>(tensor) / static_cast<double>(items.size());
      EXPECT_NEAR(fraction, static_cast<double>(tensor_warps) / slots, 0.08)
          << max_queries << " queries, " << tensor_warps << " tensor warps";
      std::uint64_t work = 0;
      for (const item& i : items) work += i.count;
      EXPECT_EQ(tasks.tensor_work + tasks.cuda_work, work);
    }
  }
  EXPECT_EQ(tensor_warps_for(0, 8), 0u);
  EXPECT_EQ(tensor_warps_for(1, 8), 8u);
  EXPECT_EQ(tensor_warps_for(0.01, 8), 1u);
  EXPECT_EQ(tensor_warps_for(0.99, 8), 7u);
  EXPECT_EQ(tensor_warps_for(0.5, 8), 4u);
  EXPECT_EQ(tensor_warps_for(0.7, 8), 6u);
}

}  // namespace
