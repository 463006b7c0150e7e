// A table to a sink that takes row blocks at their place (a CSR file) through several devices:
// each shard joins one run of the queries against all the points and writes its rows where they
// lie (core/range_rows.hpp). The shards run a CPU engine, as in test_multi_device.cpp: cpu-grid
// itself (its rows written in place, held by the shard until it is done) and cpu-grid behind an
// engine that streams its rows in blocks as the GPU engines do (passed straight through, from
// every shard at once). Files equal brute-cpu's table byte for byte, self pairs included or not,
// self-joins and A x B, with ties at exactly eps and duplicates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/counting_sink.hpp"
#include "core/engine.hpp"
#include "core/multi_device_join.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "results/handover.hpp"
#include "support/harness.hpp"
#include "support/shapes.hpp"
#include "support/temp_dir.hpp"

namespace epsjoin::test {
namespace {

// cpu-grid, its rows handed on as blocks of about `block_ids` ids in query order, the way the
// GPU engines stream a table through their ring. `lose_own_point`: one neighbour of each row
// (the lowest) is left out, as a broken engine would.
class block_streaming_engine final : public detail::engine {
 public:
  explicit block_streaming_engine(std::size_t block_ids, bool lose_own_point = false)
      : block_ids_(block_ids), lose_own_point_(lose_own_point) {}
  std::string_view name() const override { return "cpu-grid"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override { return "cpu-grid streaming row blocks"; }
  bool reads_device_points() const override { return false; }  // its points stay on the host

  void run(detail::join_request& request) const override {
    csr_sink rows;
    rows.begin({request.queries.n, request.data.n, request.self_join, false});
    detail::join_request inner{request.res,     request.queries, request.data,
                               request.self_join, request.options, rows,
                               request.stats,   request.budget,  request.params};
    grid().run(inner);
    rows.finish();
    neighbor_table table = rows.release();
    if (lose_own_point_) drop_own_points(table, request.queries.n);
    std::vector<std::uint32_t> counts(request.queries.n);
    for (std::size_t q = 0; q < counts.size(); ++q) {
      counts[q] = static_cast<std::uint32_t>(table.offsets[q + 1] - table.offsets[q]);
    }
    detail::begin_row_blocks(request.sink, counts);
    for (std::size_t q = 0; q < counts.size();) {
      std::size_t end = q + 1;
      while (end < counts.size() && table.offsets[end + 1] - table.offsets[q] <= block_ids_) ++end;
      detail::hand_row_block(request.sink, q, {table.offsets.data() + q, end - q + 1},
                             {table.neighbors.data() + table.offsets[q],
                              table.offsets[end] - table.offsets[q]});
      q = end;
    }
  }

 private:
  static const detail::engine& grid() { return *detail::find_engine("cpu-grid"); }
  // Each row loses its lowest neighbour: the first query of the first run, at least, then lacks
  // its own point.
  static void drop_own_points(neighbor_table& table, std::size_t n) {
    neighbor_table kept;
    kept.offsets.push_back(0);
    for (std::size_t q = 0; q < n; ++q) {
      auto row = table.row(q);
      const auto lowest = std::min_element(row.begin(), row.end());
      for (auto it = row.begin(); it != row.end(); ++it) {
        if (it != lowest) kept.neighbors.push_back(*it);
      }
      kept.offsets.push_back(kept.neighbors.size());
    }
    table = std::move(kept);
  }
  std::size_t block_ids_;
  bool lose_own_point_;
};

struct run_case {
  shape_kind kind;
  std::size_t n, d, devices;
  bool self = true;
  bool include_self = false;
};

std::string name_of(const run_case& c) {
  return to_string(c.kind) + "_n" + std::to_string(c.n) + "_d" + std::to_string(c.d) + "_g" +
         std::to_string(c.devices) + (c.self ? "_self" : "_axb") + (c.include_self ? "_with_self" : "");
}

// The join on `devices` shards of `e`, into a CSR file at `path` through dispatch's counting
// sink (which puts the self pairs in when asked).
join_stats write_through_shards(const detail::engine& e, dataset_view queries, dataset_view data,
                                const run_case& c, double eps, const std::string& path) {
  resources res(2);
  std::vector<int> ordinals(c.devices);
  for (std::size_t k = 0; k < c.devices; ++k) ordinals[k] = static_cast<int>(k);
  res.set_devices(ordinals);
  join_options options;
  options.eps = eps;
  options.include_self = c.include_self;
  const auto params = detail::find_engine("cpu-grid")->parse_params(options.params);
  join_stats stats;
  csr_file_sink file(path, true);
  detail::counting_sink counted(file);
  detail::memory_budget budget(res.memory(), {});
  counted.set_budget(&budget, 2);
  counted.begin({queries.n, data.n, c.self, c.include_self});
  detail::join_request request{res, queries, data, c.self, options, counted, stats, budget,
                               params.get()};
  detail::run_on_devices(e, request);
  counted.finish();
  stats.pairs = counted.pairs();
  return stats;
}

neighbor_table oracle_table(dataset_view queries, dataset_view data, const run_case& c,
                            double eps) {
  resources res(2);
  join_options options;
  options.eps = eps;
  options.engine = "brute-cpu";
  options.include_self = c.include_self;
  csr_sink sink(true);
  if (c.self) {
    self_join(res, data, options, sink);
  } else {
    join(res, queries, data, options, sink);
  }
  return sink.release();
}

std::vector<run_case> cases() {
  return {{shape_kind::lattice, 2500, 2, 3},         {shape_kind::lattice, 2500, 2, 3, true, true},
          {shape_kind::duplicates, 1200, 3, 4},      {shape_kind::skewed, 1800, 3, 2, true, true},
          {shape_kind::clusters, 900, 2, 2, false},  {shape_kind::uniform, 1500, 5, 4, false},
          {shape_kind::uniform, 5, 2, 4},            {shape_kind::uniform, 3, 2, 4, true, true}};
}

double case_eps(const run_case& c, const dataset& points) {
  if (c.kind == shape_kind::lattice) return 0.25;  // the lattice's spacing: ties at exactly eps
  return eps_clear_of_pairs(points.view(), eps_for_selectivity(points.view(), points.view(), 12),
                            1e-12);
}

void check_files(const detail::engine& e, const char* how) {
  for (const run_case& c : cases()) {
    SCOPED_TRACE(name_of(c) + " " + how);
    const dataset data = make_shape(c.kind, c.n, c.d, 31 + c.n);
    const dataset query_set = make_shape(c.kind, c.n / 2 + 1, c.d, 77 + c.n);
    const dataset_view queries = c.self ? data.view() : query_set.view();
    const double eps = case_eps(c, data);
    const neighbor_table expected = oracle_table(queries, data.view(), c, eps);

    const std::string path = temp_path("runs_" + name_of(c) + ".csr");
    const join_stats stats = write_through_shards(e, queries, data.view(), c, eps, path);
    const neighbor_table written = read_csr(path);
    std::remove(path.c_str());
    EXPECT_EQ(written.offsets, expected.offsets);
    EXPECT_EQ(written.neighbors, expected.neighbors);
    EXPECT_EQ(stats.pairs, expected.n_pairs() - (c.include_self && c.self ? queries.n : 0));
    EXPECT_NE(note_of(stats, "devices_split").find("query runs"), std::string::npos);
    EXPECT_EQ(note_of(stats, "devices_work").find("halo"), std::string::npos);
  }
}

TEST(multi_device_runs, rows_held_by_each_shard_reach_the_file_at_their_place) {
  check_files(*detail::find_engine("cpu-grid"), "rows in place");
}

TEST(multi_device_runs, streamed_blocks_pass_straight_to_their_place) {
  check_files(block_streaming_engine(37), "blocks of 37 ids");
  check_files(block_streaming_engine(1), "a row a block");
}

// A shard whose engine loses a row's own point is an internal error, not a file with a row
// short; the other shards, waiting for it, stop too (the test would hang otherwise), and
// nothing is left under the path.
TEST(multi_device_runs, a_row_without_its_own_point_fails_every_shard) {
  const run_case c{shape_kind::uniform, 3000, 2, 3};
  const dataset data = make_shape(c.kind, c.n, c.d, 5);
  const double eps = eps_for_selectivity(data.view(), data.view(), 10);
  const std::string path = temp_path("runs_broken.csr");
  std::remove(path.c_str());
  EXPECT_THROW(write_through_shards(block_streaming_engine(500, true), data.view(), data.view(),
                                    c, eps, path),
               error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

// A stream target cannot take blocks out of order: it keeps the gathered delivery, and the
// sink says so in its request.
TEST(multi_device_runs, only_a_seekable_file_takes_blocks_in_any_order) {
  EXPECT_TRUE(csr_file_sink(temp_path("runs_any_order.csr")).request().row_blocks_any_order);
  EXPECT_FALSE(csr_file_sink("-").request().row_blocks_any_order);
  EXPECT_FALSE(row_block_sink([](std::size_t, std::span<const std::uint64_t>,
                                 std::span<const std::uint32_t>) {})
                   .request()
                   .row_blocks_any_order);
}

}  // namespace
}  // namespace epsjoin::test
