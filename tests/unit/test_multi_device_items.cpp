// The multi-device join's second split, by work items (core/engine.hpp, work_share): for a
// counts-only join on an engine that shares its items, every device runs the whole join and
// counts one item in every G. The row-join engines do it on the GPU (tests/gpu/test_multi_gpu.cpp);
// here a brute-force stand-in whose items are the queries runs the layer on any machine: the
// counts equal the oracle's for 2 to 4 devices, self-joins and A x B, ties at exactly eps, and a
// device that ignores its share or builds other items is an error, never a wrong count.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/multi_device_join.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/shapes.hpp"
#include "results/handover.hpp"

namespace epsjoin::test {
namespace {

enum class share_fault { none, ignores_share, other_items };

// Brute force whose work item q is query q, counting items share.index, + share.count, ... when
// given a share; `fault` makes the second device misbehave.
class sharing_brute final : public detail::engine {
 public:
  explicit sharing_brute(share_fault fault) : fault_(fault) {}
  std::string_view name() const override { return "sharing-brute"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override { return "test stand-in"; }
  bool shares_work_items() const override { return true; }
  bool reads_device_points() const override { return false; }  // it reads them on the host

  void run(detail::join_request& req) const override {
    detail::work_share* share = req.item_share;
    const bool faulty = share != nullptr && share->index == 1;
    unsigned first = 0, step = 1;
    if (share != nullptr && !(faulty && fault_ == share_fault::ignores_share)) {
      first = share->index;
      step = share->count;
      share->honoured = true;
      share->items = req.queries.n + (faulty && fault_ == share_fault::other_items ? 1 : 0);
      share->candidates = req.queries.n * req.data.n;
    }
    req.stats.candidates = req.queries.n * req.data.n;  // the whole join's, as the row join says
    const double eps2 = req.options.eps * req.options.eps;
    std::vector<std::uint32_t> ids, counts;
    for (std::size_t q = first; q < req.queries.n; q += step) {
      std::uint32_t found = 0;
      for (std::size_t j = 0; j < req.data.n; ++j) {
        if (req.self_join && j == q) continue;
        double d2 = 0;
        for (std::size_t k = 0; k < req.data.d; ++k) {
          const double diff = req.queries.at(q, k) - req.data.at(j, k);
          d2 += diff * diff;
        }
        found += d2 <= eps2 ? 1 : 0;
      }
      ids.push_back(static_cast<std::uint32_t>(q));
      counts.push_back(found);
    }
    epsjoin::detail::hand_counts(req.sink, ids, counts);
  }

 private:
  share_fault fault_;
};

struct items_case {
  shape_kind kind;
  std::size_t n, d, devices;
  bool self;
};

join_stats run_items(const detail::engine& e, dataset_view queries, dataset_view data, bool self,
                     double eps, std::size_t devices, result_sink& sink,
                     device_split split = device_split::work_items) {
  resources res(2);
  std::vector<int> ordinals(devices);
  for (std::size_t k = 0; k < devices; ++k) ordinals[k] = static_cast<int>(k);
  res.set_devices(ordinals);
  res.set_device_split(split);
  join_options options;
  options.eps = eps;
  join_stats stats;
  detail::join_request request{res, queries, data, self, options, sink, stats, {}, nullptr};
  sink.begin({queries.n, data.n, self, false});
  detail::run_on_devices(e, request);
  sink.finish();
  return stats;
}

TEST(multi_device_items, counts_equal_the_oracle) {
  const sharing_brute engine(share_fault::none);
  std::vector<items_case> cases;
  for (shape_kind kind : {shape_kind::uniform, shape_kind::lattice, shape_kind::duplicates,
                          shape_kind::skewed}) {
    for (std::size_t devices : {2, 3, 4}) {
      cases.push_back({kind, 900, 2, devices, true});
      cases.push_back({kind, 600, 5, devices, false});
    }
  }
  for (std::size_t n : {0, 1, 2, 3}) cases.push_back({shape_kind::uniform, n, 2, 4, true});
  for (const items_case& c : cases) {
    SCOPED_TRACE(to_string(c.kind) + " n=" + std::to_string(c.n) + " d=" + std::to_string(c.d) +
                 " devices=" + std::to_string(c.devices) + (c.self ? " self" : " A x B"));
    const dataset data = make_shape(c.kind, c.n, c.d, 5 + c.n + c.d);
    const dataset other = make_shape(c.kind, c.n / 2 + 1, c.d, 61 + c.n);
    const dataset_view queries = c.self ? data.view() : other.view();
    const double eps = c.kind == shape_kind::lattice || c.n < 2
                           ? 0.25
                           : eps_for_selectivity(data.view(), data.view(), 12);
    resources res(2);
    join_options options;
    options.eps = eps;
    options.engine = "brute-cpu";
    csr_sink oracle(true);
    if (c.self) {
      self_join(res, data.view(), options, oracle);
    } else {
      join(res, queries, data.view(), options, oracle);
    }

    count_sink counts(true);
    const join_stats stats = run_items(engine, queries, data.view(), c.self, eps, c.devices, counts);
    ASSERT_EQ(counts.per_point().size(), queries.n);
    for (std::size_t q = 0; q < queries.n; ++q) {
      ASSERT_EQ(counts.per_point()[q], oracle.table().row(q).size()) << "query " << q;
    }
    EXPECT_EQ(counts.total(), oracle.table().neighbors.size());
    EXPECT_NE(note_of(stats, "devices_split").find("work items"), std::string::npos);
    EXPECT_TRUE(note_of(stats, "devices_cut").empty()) << "nothing is cut when items are shared";
    if (queries.n > 0) {
      EXPECT_EQ(stats.candidates, queries.n * data.n()) << "the join's candidates, once";
    }
  }
}

TEST(multi_device_items, a_device_that_ignores_its_share_is_an_error) {
  const dataset points = make_shape(shape_kind::uniform, 500, 2, 9);
  for (share_fault fault : {share_fault::ignores_share, share_fault::other_items}) {
    const sharing_brute engine(fault);
    count_sink counts;
    try {
      run_items(engine, points.view(), points.view(), true, 0.05, 2, counts);
      FAIL() << "the shares did not add up to the join";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find(fault == share_fault::ignores_share ? "share"
                                                                               : "different"),
                std::string::npos)
          << e.what();
    }
  }
}

// The automatic split plans the slabs and shares items only where their halo would be large:
// not for 2-D points at a small eps, but for 16-D points, where a slab is thin against eps.
TEST(multi_device_items, the_automatic_split_follows_the_halo) {
  const sharing_brute engine(share_fault::none);
  const dataset flat = make_shape(shape_kind::uniform, 4000, 2, 21);
  const dataset deep = make_shape(shape_kind::uniform, 3000, 16, 22);
  for (const dataset* points : {&flat, &deep}) {
    const double eps = eps_for_selectivity(points->view(), points->view(), 10);
    count_sink automatic(true), items(true);
    const join_stats stats = run_items(engine, points->view(), points->view(), true, eps, 2,
                                       automatic, device_split::automatic);
    run_items(engine, points->view(), points->view(), true, eps, 2, items);
    EXPECT_EQ(automatic.per_point(), items.per_point());
    const bool shared = !note_of(stats, "devices_split").empty();
    EXPECT_EQ(shared, points == &deep) << note_of(stats, "devices_split_reason");
    EXPECT_EQ(note_of(stats, "devices_cut").empty(), shared);

    // The total alone: items at any d, and no cut planned (no sample joined for it).
    count_sink total;
    const join_stats totalled = run_items(engine, points->view(), points->view(), true, eps, 2,
                                          total, device_split::automatic);
    EXPECT_EQ(total.total(), items.total());
    EXPECT_FALSE(note_of(totalled, "devices_split").empty())
        << note_of(totalled, "devices_split_reason");
    EXPECT_NE(note_of(totalled, "devices_split_reason").find("total"), std::string::npos);
    EXPECT_TRUE(note_of(totalled, "devices_cut").empty());
    for (const stage_time& stage : totalled.stages) EXPECT_NE(stage.name, "partition sample");
  }
  // A x B deals the queries out unless items are asked for.
  count_sink dealt(true);
  const dataset queries = make_shape(shape_kind::uniform, 500, 2, 23);
  const join_stats stats = run_items(engine, queries.view(), flat.view(), false, 0.05, 2, dealt,
                                     device_split::automatic);
  EXPECT_TRUE(note_of(stats, "devices_split").empty());
}

// Only counts are shared by items: a sink that takes pairs or rows still gets the slabs.
TEST(multi_device_items, pairs_and_rows_keep_the_slabs) {
  const dataset points = make_shape(shape_kind::uniform, 300, 2, 4);
  // An engine that does not share its items.
  const detail::engine* grid = detail::find_engine("super-ego");
  ASSERT_NE(grid, nullptr);
  EXPECT_FALSE(grid->shares_work_items());
  unique_pairs_sink pairs;
  resources res(1);
  res.set_devices({0, 1});
  join_options options;
  options.eps = 0.05;
  join_stats stats;
  const auto params = grid->parse_params(options.params);
  detail::join_request request{res, points.view(), points.view(), true, options, pairs, stats,
                               {}, params.get()};
  EXPECT_FALSE(detail::shares_items_across_devices(*grid, request));
  const sharing_brute sharing(share_fault::none);
  EXPECT_FALSE(detail::shares_items_across_devices(sharing, request));
  count_sink counts;
  detail::join_request counting{res, points.view(), points.view(), true, options, counts, stats,
                                {}, params.get()};
  EXPECT_TRUE(detail::shares_items_across_devices(sharing, counting));

  // resources::set_device_split overrides the choice; items where they cannot apply are refused.
  res.set_device_split(device_split::slabs);
  EXPECT_FALSE(detail::shares_items_across_devices(sharing, counting));
  res.set_device_split(device_split::work_items);
  EXPECT_TRUE(detail::shares_items_across_devices(sharing, counting));
  EXPECT_THROW(detail::shares_items_across_devices(sharing, request), invalid_argument);
  EXPECT_THROW(detail::shares_items_across_devices(*grid, counting), invalid_argument);
}

TEST(multi_device_items, slabs_when_asked_give_the_same_counts) {
  const sharing_brute engine(share_fault::none);
  const dataset points = make_shape(shape_kind::lattice, 700, 2, 12);
  count_sink by_items(true), by_slabs(true);
  run_items(engine, points.view(), points.view(), true, 0.25, 3, by_items);
  resources res(2);
  res.set_devices({0, 1, 2});
  res.set_device_split(device_split::slabs);
  join_options options;
  options.eps = 0.25;
  join_stats stats;
  detail::join_request request{res, points.view(), points.view(), true, options, by_slabs, stats,
                               {}, nullptr};
  by_slabs.begin({points.n(), points.n(), true, false});
  detail::run_on_devices(engine, request);
  by_slabs.finish();
  EXPECT_EQ(by_slabs.per_point(), by_items.per_point());
  EXPECT_FALSE(note_of(stats, "devices_cut").empty()) << "slabs were cut";
}

}  // namespace
}  // namespace epsjoin::test
