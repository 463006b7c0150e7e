// The multi-device join's shards, run with a CPU engine (the shards are `resources` objects; no
// GPU is needed): for 2 to 4 shards, self-joins and A x B joins, on uniform, clustered, skewed,
// duplicate-heavy, lattice (pairs at exactly eps) and offset data, the result equals brute-cpu's
// as a CSR table, as unique pairs (each unordered pair once across shards) and as counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/counting_sink.hpp"
#include "core/engine.hpp"
#include "core/multi_device_join.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/shapes.hpp"
#include "support/temp_dir.hpp"
#include "results/handover.hpp"

namespace epsjoin::test {
namespace {

struct multi_case {
  shape_kind kind;
  std::size_t n, d, devices;
  bool self = true;
};

// The join of `queries` x `data` on `devices` shards of cpu-grid, into `sink` (begun and finished
// by the caller).
join_stats run_shards_into(dataset_view queries, dataset_view data, bool self, double eps,
                           std::size_t devices, result_sink& sink,
                           std::function<void(double)> progress = {},
                           std::uint64_t segment_ids = 0) {
  resources res(2);
  std::vector<int> ordinals(devices);
  for (std::size_t k = 0; k < devices; ++k) ordinals[k] = static_cast<int>(k);
  res.set_devices(ordinals);
  join_options options;
  options.eps = eps;
  options.engine = "cpu-grid";
  options.progress = std::move(progress);
  const detail::engine* e = detail::find_engine("cpu-grid");
  const auto params = e->parse_params(options.params);
  join_stats stats;
  detail::memory_overrides overrides;
  overrides.segment_ids = segment_ids;
  detail::join_request request{res,   queries, data, self, options, sink,
                               stats, detail::memory_budget(res.memory(), overrides),
                               params.get()};
  detail::run_on_devices(*e, request);
  EXPECT_EQ(res.threads(), 2u) << "the first shard's thread share must be undone";
  return stats;
}

join_stats run_shards(dataset_view queries, dataset_view data, bool self, double eps,
                      std::size_t devices, result_sink& sink,
                      std::function<void(double)> progress = {}, std::uint64_t segment_ids = 0) {
  sink.begin({queries.n, data.n, self, false});
  join_stats stats =
      run_shards_into(queries, data, self, eps, devices, sink, std::move(progress), segment_ids);
  sink.finish();
  return stats;
}

neighbor_table oracle_table(dataset_view queries, dataset_view data, bool self, double eps) {
  resources res(2);
  join_options options;
  options.eps = eps;
  options.engine = "brute-cpu";
  csr_sink sink(true);
  if (self) {
    self_join(res, data, options, sink);
  } else {
    join(res, queries, data, options, sink);
  }
  return sink.release();
}

double case_eps(const multi_case& c, const dataset& points) {
  if (c.kind == shape_kind::lattice) return 0.25;  // the lattice's spacing: ties at exactly eps
  // eps_for_selectivity gives a pair's own distance, a tie that the shards' cpu-grid may decide
  // either way (clusters_n1500_d3 lost it in a Debug build, where no multiply-add is contracted
  // into an FMA): the oracle is exact only outside a band around eps.
  return eps_clear_of_pairs(points.view(), eps_for_selectivity(points.view(), points.view(), 12),
                            1e-12);
}

class multi_device_test : public testing::TestWithParam<multi_case> {};

TEST_P(multi_device_test, equals_the_oracle_in_every_form) {
  const multi_case& c = GetParam();
  const dataset data = make_shape(c.kind, c.n, c.d, 17 + c.n + c.d);
  const dataset query_set = make_shape(c.kind, c.n / 2 + 1, c.d, 91 + c.n);
  const dataset_view queries = c.self ? data.view() : query_set.view();
  const double eps = case_eps(c, data);
  const neighbor_table expected = oracle_table(queries, data.view(), c.self, eps);

  csr_sink table(true);
  const join_stats stats = run_shards(queries, data.view(), c.self, eps, c.devices, table);
  EXPECT_EQ(table.table().offsets, expected.offsets);
  EXPECT_EQ(table.table().neighbors, expected.neighbors);
  EXPECT_FALSE(note_of(stats, "devices_work").empty());

  count_sink counts(true);
  run_shards(queries, data.view(), c.self, eps, c.devices, counts);
  ASSERT_EQ(counts.per_point().size(), queries.n);
  for (std::size_t q = 0; q < queries.n; ++q) {
    ASSERT_EQ(counts.per_point()[q], expected.offsets[q + 1] - expected.offsets[q])
        << "query " << q;
  }
  EXPECT_EQ(counts.total(), expected.neighbors.size());

  unique_pairs_sink unique;
  run_shards(queries, data.view(), c.self, eps, c.devices, unique);
  std::vector<index_pair> want;
  for (std::size_t q = 0; q < queries.n; ++q) {
    for (std::uint64_t k = expected.offsets[q]; k < expected.offsets[q + 1]; ++k) {
      const std::uint32_t j = expected.neighbors[k];
      if (!c.self || q < j) want.push_back({static_cast<std::uint32_t>(q), j});
    }
  }
  EXPECT_EQ(unique.pairs(), want) << "each unordered pair once across the shards";
}

std::vector<multi_case> cases() {
  std::vector<multi_case> out;
  for (shape_kind kind : {shape_kind::uniform, shape_kind::clusters, shape_kind::skewed,
                          shape_kind::duplicates, shape_kind::lattice, shape_kind::offset}) {
    for (std::size_t d : {1, 2, 3, 6}) {
      for (std::size_t devices : {2, 3, 4}) {
        out.push_back({kind, 1500, d, devices});
        out.push_back({kind, 700, d, devices, false});
      }
    }
  }
  for (std::size_t n : {0, 1, 2, 3, 5}) out.push_back({shape_kind::uniform, n, 2, 4});
  for (std::size_t n : {0, 1, 5}) out.push_back({shape_kind::uniform, n, 2, 3, false});
  return out;
}

std::string name_of(const multi_case& c) {
  return to_string(c.kind) + "_n" + std::to_string(c.n) + "_d" + std::to_string(c.d) + "_g" +
         std::to_string(c.devices) + (c.self ? "_self" : "_axb");
}

void PrintTo(const multi_case& c, std::ostream* out) { *out << name_of(c); }

INSTANTIATE_TEST_SUITE_P(shards, multi_device_test, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<multi_case>& param_info) {
                           return name_of(param_info.param);
                         });

// As dispatch runs it: through its counting sink, which puts self pairs into delivered rows (and
// the pairs and counts forms get them after the join, as dispatch adds them).
TEST(multi_device, self_pairs_reach_every_form_once) {
  const dataset points = make_shape(shape_kind::lattice, 1200, 2, 3);
  const double eps = 0.25;
  join_options with_self;
  with_self.eps = eps;
  with_self.engine = "brute-cpu";
  with_self.include_self = true;
  resources res(2);
  csr_sink oracle(true);
  self_join(res, points.view(), with_self, oracle);
  auto through_dispatch = [&](result_sink& sink) {
    detail::counting_sink counted(sink);
    counted.begin({points.n(), points.n(), true, true});
    run_shards_into(points.view(), points.view(), true, eps, 3, counted);
    if (!counted.rows_delivered()) {
      std::vector<index_pair> self;
      std::vector<std::uint32_t> ids, ones;
      for (std::uint32_t i = 0; i < points.n(); ++i) {
        self.push_back({i, i});
        ids.push_back(i);
        ones.push_back(1);
      }
      if (counted.request().counts_only()) {
        epsjoin::detail::hand_counts(counted, ids, ones);
      } else {
        counted.consume(self);
      }
    }
    counted.finish();
  };
  csr_sink table(true);
  through_dispatch(table);
  EXPECT_EQ(table.table().offsets, oracle.table().offsets);
  EXPECT_EQ(table.table().neighbors, oracle.table().neighbors);
  count_sink counts(true);
  through_dispatch(counts);
  for (std::size_t q = 0; q < points.n(); ++q) {
    ASSERT_EQ(counts.per_point()[q], oracle.table().row(q).size()) << "query " << q;
  }
}

// A sink that streams rows (row blocks: the library's row_block_sink, a CSR file) gets the
// devices' rows in blocks of complete rows in query order, with the rows of the oracle.
TEST(multi_device, row_blocks_and_csr_files_equal_the_oracle) {
  for (const multi_case& c : {multi_case{shape_kind::lattice, 2500, 2, 3},
                              multi_case{shape_kind::skewed, 1800, 3, 4},
                              multi_case{shape_kind::clusters, 900, 2, 2, false},
                              multi_case{shape_kind::uniform, 5, 2, 4}}) {
    SCOPED_TRACE(name_of(c));
    const dataset data = make_shape(c.kind, c.n, c.d, 31 + c.n);
    const dataset query_set = make_shape(c.kind, c.n / 2 + 1, c.d, 77 + c.n);
    const dataset_view queries = c.self ? data.view() : query_set.view();
    const double eps = case_eps(c, data);
    const neighbor_table expected = oracle_table(queries, data.view(), c.self, eps);

    neighbor_table streamed;
    streamed.offsets.push_back(0);
    std::size_t next_query = 0, n_blocks = 0;
    row_block_sink blocks(
        [&](std::size_t first, std::span<const std::uint64_t> offsets,
            std::span<const std::uint32_t> ids) {
          EXPECT_EQ(first, next_query) << "blocks in query order, each where the last ended";
          EXPECT_EQ(offsets.front(), streamed.offsets.back());
          for (std::size_t i = 1; i < offsets.size(); ++i) streamed.offsets.push_back(offsets[i]);
          streamed.neighbors.insert(streamed.neighbors.end(), ids.begin(), ids.end());
          next_query = first + offsets.size() - 1;
          ++n_blocks;
        },
        true);
    // Blocks of at most 500 ids (a row longer than that gets a block of its own).
    run_shards(queries, data.view(), c.self, eps, c.devices, blocks, {}, 500);
    EXPECT_EQ(next_query, queries.n);
    if (expected.neighbors.size() > 2000) {
      EXPECT_GT(n_blocks, 3u);
    }
    EXPECT_EQ(streamed.offsets, expected.offsets);
    EXPECT_EQ(streamed.neighbors, expected.neighbors);

    const std::string path = epsjoin::test::temp_path("multi_device_" + name_of(c) + ".csr");
    {
      csr_file_sink file(path, true);
      run_shards(queries, data.view(), c.self, eps, c.devices, file);
    }
    const neighbor_table written = read_csr(path);
    std::remove(path.c_str());
    EXPECT_EQ(written.offsets, expected.offsets);
    EXPECT_EQ(written.neighbors, expected.neighbors);
  }
}

TEST(multi_device, a_stop_from_the_progress_callback_stops_every_shard) {
  const dataset points = make_shape(shape_kind::uniform, 20000, 2, 5);
  const double eps = eps_for_selectivity(points.view(), points.view(), 20);
  count_sink counts;
  EXPECT_THROW(run_shards(points.view(), points.view(), true, eps, 3, counts,
                          [](double) { throw std::runtime_error("stopped by the caller"); }),
               std::runtime_error);
}

bool has_stage(const join_stats& stats, const std::string& name) {
  return std::any_of(stats.stages.begin(), stats.stages.end(),
                     [&](const stage_time& t) { return t.name == name; });
}

// A sink that takes rows in place gets each device's own rows written into its table by that
// device (detail::shard_table): no shard table of its own, no pass that gathers them after.
TEST(multi_device, rows_go_into_the_callers_table_in_place) {
  const dataset points = make_shape(shape_kind::clusters, 4000, 2, 12);
  const double eps = eps_clear_of_pairs(
      points.view(), eps_for_selectivity(points.view(), points.view(), 20), 1e-12);
  csr_sink table(true);
  const join_stats stats = run_shards(points.view(), points.view(), true, eps, 3, table);
  EXPECT_TRUE(has_stage(stats, "rows' ids to the caller's"));
  EXPECT_FALSE(has_stage(stats, "devices' rows to the table"));
  const neighbor_table expected = oracle_table(points.view(), points.view(), true, eps);
  EXPECT_EQ(table.table().offsets, expected.offsets);
  EXPECT_EQ(table.table().neighbors, expected.neighbors);
}

// Devices wait for each other before they write: a stop, or a table the memory limit refuses,
// must reach every waiting device (the test would hang otherwise), and the cause is rethrown.
TEST(multi_device, a_stop_or_a_refused_table_releases_the_waiting_devices) {
  const dataset points = make_shape(shape_kind::uniform, 20000, 2, 5);
  const double eps = eps_for_selectivity(points.view(), points.view(), 20);
  csr_sink stopped;
  std::atomic<int> reports{0};
  EXPECT_THROW(run_shards(points.view(), points.view(), true, eps, 3, stopped,
                          [&](double) {
                            if (reports.fetch_add(1) > 3) throw std::runtime_error("stopped");
                          }),
               std::runtime_error);

  csr_sink refused;
  detail::counting_sink counted(refused);
  detail::memory_budget tiny(memory_limits{1 << 16, 0}, {});
  counted.set_budget(&tiny, 2);
  counted.begin({points.n(), points.n(), true, false});
  EXPECT_THROW(run_shards_into(points.view(), points.view(), true, eps, 3, counted), out_of_memory);
}

TEST(multi_device, dispatch_leaves_cpu_engines_on_one_shard) {
  const dataset points = make_shape(shape_kind::clusters, 3000, 3, 8);
  const double eps = eps_for_selectivity(points.view(), points.view(), 10);
  resources res(2);
  res.set_devices({0, 1, 2});
  join_options options;
  options.eps = eps;
  options.engine = "cpu-grid";
  csr_sink table(true);
  const join_stats stats = self_join(res, points.view(), options, table);
  EXPECT_TRUE(note_of(stats, "devices_work").empty());
  const neighbor_table expected = oracle_table(points.view(), points.view(), true, eps);
  EXPECT_EQ(table.table().neighbors, expected.neighbors);
}

TEST(multi_device, set_devices_refuses_bad_lists) {
  resources res(1);
  EXPECT_THROW(res.set_devices({}), std::invalid_argument);
  EXPECT_THROW(res.set_devices({0, -1}), std::invalid_argument);
  res.set_devices({2, 0});
  EXPECT_EQ(res.device(), 2);
  EXPECT_EQ(res.devices(), (std::vector<int>{2, 0}));
  EXPECT_EQ(res.peer(1).device(), 0);
  EXPECT_THROW(res.peer(2), std::out_of_range);
}

}  // namespace
}  // namespace epsjoin::test

namespace epsjoin::test {
namespace {

// self_join_rows: the rows of the first n_rows points equal those rows of the full self-join, in
// every form, with and without self pairs (ties at exactly eps on the lattice).
TEST(self_join_rows, equals_the_rows_of_the_full_self_join) {
  for (shape_kind kind : {shape_kind::uniform, shape_kind::lattice, shape_kind::duplicates}) {
    for (std::size_t d : {1, 2, 4}) {
      const dataset points = make_shape(kind, 900, d, 40 + d);
      const double eps = kind == shape_kind::lattice
                             ? 0.25
                             : eps_for_selectivity(points.view(), points.view(), 15);
      for (bool include_self : {false, true}) {
        join_options options;
        options.eps = eps;
        options.engine = "cpu-grid";
        options.include_self = include_self;
        resources res(2);
        csr_sink whole(true);
        self_join(res, points.view(), options, whole);
        const neighbor_table& all = whole.table();
        for (std::size_t n_rows : {std::size_t{0}, std::size_t{1}, std::size_t{333}, points.n()}) {
          SCOPED_TRACE(to_string(kind) + " d=" + std::to_string(d) + " rows=" +
                       std::to_string(n_rows) + (include_self ? " with self" : ""));
          csr_sink table(true);
          const join_stats stats = self_join_rows(res, points.view(), n_rows, options, table);
          ASSERT_EQ(table.table().n_queries(), n_rows);
          std::uint64_t want = 0;
          for (std::size_t q = 0; q < n_rows; ++q) {
            const auto got = table.table().row(q), expected = all.row(q);
            ASSERT_TRUE(std::equal(got.begin(), got.end(), expected.begin(), expected.end()))
                << "row " << q;
            want += expected.size();
          }
          EXPECT_EQ(stats.pairs + stats.self_pairs, want);
          count_sink counts(true);
          self_join_rows(res, points.view(), n_rows, options, counts);
          ASSERT_EQ(counts.per_point().size(), n_rows);
          for (std::size_t q = 0; q < n_rows; ++q) {
            ASSERT_EQ(counts.per_point()[q], all.row(q).size()) << "count of row " << q;
          }
        }
      }
    }
  }
  resources res(1);
  join_options options;
  options.eps = 0.1;
  const dataset points = make_shape(shape_kind::uniform, 10, 2, 1);
  count_sink counts;
  EXPECT_THROW(self_join_rows(res, points.view(), 11, options, counts), invalid_argument);
}

}  // namespace
}  // namespace epsjoin::test
