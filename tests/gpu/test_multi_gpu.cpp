// Every GPU, tensor-core and CPU+GPU engine spread over several devices (every visible GPU; on a
// one-GPU machine two shards share it, which runs every path of the split) gives exactly the
// one-device result: CSR rows (in memory; to a file by runs of the queries), per-point counts (by
// slabs, and shared by work items on the row-join engines, whose devices then get the points
// uploaded once and copied between them) and unique pairs, self-joins and A x B, with ties at
// exactly eps (the lattice) and skewed data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "epsjoin/build_info.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/shapes.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace epsjoin;
using namespace epsjoin::test;

std::vector<int> shard_devices() {
  std::vector<int> ordinals;
  for (const cuda_device& device : cuda_devices()) ordinals.push_back(device.ordinal);
  if (ordinals.size() == 1) ordinals.push_back(ordinals.front());
  return ordinals;
}

std::vector<std::string> device_engines() {
  std::vector<std::string> names;
  for (const engine_info& e : engines()) {
    if (e.processor != "cpu" && e.available) names.push_back(e.name);
  }
  return names;
}

struct shape_case {
  shape_kind kind;
  std::size_t n, d;
  bool self;
};

join_stats run(const std::string& engine, const std::vector<int>& devices, dataset_view queries,
               dataset_view data, bool self, double eps, result_sink& sink,
               device_split split = device_split::automatic) {
  resources res;
  res.set_devices(devices);
  res.set_device_split(split);
  join_options options;
  options.eps = eps;
  options.engine = engine;
  return self ? self_join(res, data, options, sink) : join(res, queries, data, options, sink);
}

void check_engine(const std::string& engine, const shape_case& c) {
  SCOPED_TRACE(engine + " on " + to_string(c.kind) + " n=" + std::to_string(c.n) +
               " d=" + std::to_string(c.d) + (c.self ? " self" : " A x B"));
  const dataset data = make_shape(c.kind, c.n, c.d, 7 + c.n);
  const dataset other = make_shape(c.kind, c.n / 2, c.d, 19 + c.n);
  const dataset_view queries = c.self ? data.view() : other.view();
  const double eps =
      c.kind == shape_kind::lattice ? 0.25 : eps_for_selectivity(data.view(), data.view(), 30);

  csr_sink one(true);
  try {
    run(engine, {shard_devices().front()}, queries, data.view(), c.self, eps, one);
  } catch (const invalid_argument&) {
    return;  // the engine does not run this shape on one device either
  }
  const neighbor_table& expected = one.table();

  csr_sink table(true);
  const join_stats stats = run(engine, shard_devices(), queries, data.view(), c.self, eps, table);
  EXPECT_NE(note_of(stats, "devices_work"), "") << "the join did not spread over the devices";
  // In place: no table gathered after the join, and a row-join engine writes the caller's ids
  // itself (no pass maps them on the host).
  auto staged = [&](const char* name) {
    return std::any_of(stats.stages.begin(), stats.stages.end(),
                       [&](const stage_time& t) { return t.name == name; });
  };
  EXPECT_FALSE(staged("devices' rows to the table"));
  const bool writes_caller_ids = engine != "hegjoin" && engine != "gpu-sj" && engine != "brute-gpu";
  if (c.self && writes_caller_ids) {
    EXPECT_FALSE(staged("rows' ids to the caller's"));
  }
  EXPECT_EQ(table.table().offsets, expected.offsets);
  EXPECT_EQ(table.table().neighbors, expected.neighbors);

  // A CSR file: each device joins a run of the queries against all the points and writes its
  // rows where they lie in the file (blocks through the ring, or rows held and then written).
  {
    const std::string path = temp_path("multi_gpu_" + engine + ".csr");
    {
      csr_file_sink file(path, true);
      const join_stats file_stats =
          run(engine, shard_devices(), queries, data.view(), c.self, eps, file);
      EXPECT_NE(note_of(file_stats, "devices_split").find("query runs"), std::string::npos)
          << note_of(file_stats, "devices_split");
      EXPECT_EQ(file_stats.pairs, expected.n_pairs());
    }
    const neighbor_table written = read_csr(path);
    std::remove(path.c_str());
    EXPECT_EQ(written.offsets, expected.offsets);
    EXPECT_EQ(written.neighbors, expected.neighbors);
  }

  // Counts only: the row-join engines may share the work items (automatically where slabs
  // would have a large halo, and always when asked) instead of cutting slabs.
  const bool row_join = engine != "hegjoin" && engine != "gpu-sj" && engine != "brute-gpu";
  for (device_split split : {device_split::automatic, device_split::work_items}) {
    if (split == device_split::work_items && !row_join) continue;
    count_sink counts(true);
    const join_stats count_stats =
        run(engine, shard_devices(), queries, data.view(), c.self, eps, counts, split);
    const bool shared = note_of(count_stats, "devices_split").find("work items") != std::string::npos;
    EXPECT_TRUE(!shared || row_join) << note_of(count_stats, "devices_split");
    if (split == device_split::work_items) {
      EXPECT_TRUE(shared) << "items were asked for";
    }
    if (shared && c.self) {
      // Every device holds all the points, but they crossed from the host once.
      EXPECT_EQ(count_stats.h2d_point_bytes, data.n() * data.d() * sizeof(double));
      EXPECT_NE(note_of(count_stats, "devices_points"), "");
    }
    ASSERT_EQ(counts.per_point().size(), queries.n);
    for (std::size_t q = 0; q < queries.n; ++q) {
      ASSERT_EQ(counts.per_point()[q], expected.offsets[q + 1] - expected.offsets[q])
          << "query " << q << (shared ? " (work items)" : "");
    }
    // The total alone: each device sums its own points' counts where it counted them.
    count_sink total;
    const join_stats total_stats =
        run(engine, shard_devices(), queries, data.view(), c.self, eps, total, split);
    EXPECT_EQ(total.total(), expected.n_pairs()) << (shared ? "work items" : "slabs");
    EXPECT_EQ(total_stats.pairs, expected.n_pairs());
  }

  unique_pairs_sink unique;
  run(engine, shard_devices(), queries, data.view(), c.self, eps, unique);
  std::vector<index_pair> want;
  for (std::size_t q = 0; q < queries.n; ++q) {
    for (std::uint64_t k = expected.offsets[q]; k < expected.offsets[q + 1]; ++k) {
      const std::uint32_t j = expected.neighbors[k];
      if (!c.self || q < j) want.push_back({static_cast<std::uint32_t>(q), j});
    }
  }
  EXPECT_EQ(unique.pairs(), want) << "each unordered pair once across the devices";
}

TEST(multi_gpu, every_engine_equals_its_one_device_result) {
  const std::vector<shape_case> cases = {
      {shape_kind::uniform, 20000, 2, true},  {shape_kind::lattice, 4000, 2, true},
      {shape_kind::clusters, 8000, 3, true},  {shape_kind::skewed, 6000, 8, true},
      {shape_kind::uniform, 9000, 2, false},  {shape_kind::skewed, 5000, 16, false},
      // High-dimensional and skewed: the tensor-core engines choose their GEMM kernels, which
      // share a count by runs of positions, under halving too.
      {shape_kind::skewed, 4000, 16, true},
  };
  for (const std::string& engine : device_engines()) {
    for (const shape_case& c : cases) check_engine(engine, c);
  }
}

// Small enough for compute-sanitizer: the shards' concurrent streams, their private tables and
// the mapping of their rows, self and A x B.
TEST(multi_gpu, sanitizer_case_small_shards) {
  const std::vector<shape_case> cases = {{shape_kind::uniform, 2000, 2, true},
                                         {shape_kind::lattice, 1500, 2, false}};
  for (const std::string& engine : device_engines()) {
    for (const shape_case& c : cases) check_engine(engine, c);
  }
}

TEST(multi_gpu, a_missing_device_is_refused_clearly) {
  const dataset points = make_shape(shape_kind::uniform, 5000, 2, 3);
  resources res;
  res.set_devices({0, 977});
  join_options options;
  options.eps = 0.01;
  options.engine = "gds-join";
  count_sink counts;
  try {
    self_join(res, points.view(), options, counts);
    FAIL() << "device 977 does not exist";
  } catch (const unavailable& e) {
    EXPECT_NE(std::string(e.what()).find("977"), std::string::npos) << e.what();
  }
  // The refusal leaves nothing behind on this thread (an error of the runtime's would fail the
  // next launch check): the next join, on device 0, counts what the CPU counts.
  resources one;
  count_sink gpu_counts, cpu_counts;
  EXPECT_NO_THROW(self_join(one, points.view(), options, gpu_counts));
  options.engine = "cpu-grid";
  self_join(one, points.view(), options, cpu_counts);
  EXPECT_EQ(gpu_counts.total(), cpu_counts.total());
  EXPECT_GT(cpu_counts.total(), 0u);
}

}  // namespace
