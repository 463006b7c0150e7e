// The memory budget: the one place where limits turn into a planner's share.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/memory_budget.hpp"
#include "core/engine.hpp"
#include "epsjoin/epsjoin.hpp"

namespace epsjoin::detail {
namespace {

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

// n points on a 2-D lattice of spacing 1/n, many pairs at exactly the same distances: ties at
// eps for every engine, and the same points in every test.
std::vector<double> lattice(int n) {
  std::vector<double> coords;
  for (int i = 0; i < n; ++i) {
    coords.push_back(static_cast<double>(i * 7919 % n) / n);
    coords.push_back(static_cast<double>(i * 104729 % n) / n);
  }
  return coords;
}
constexpr std::uint64_t gib = std::uint64_t{1} << 30;

TEST(memory_budget, machine_host_bytes_bound_the_default) {
  const std::uint64_t machine = machine_host_bytes();
  ASSERT_GT(machine, 0u);
  const memory_budget unlimited;
  EXPECT_EQ(unlimited.host_bytes(), machine);
  EXPECT_EQ(unlimited.pinned_bytes(), machine / 8);
}

TEST(memory_budget, host_limit_bounds_every_host_share) {
  memory_limits limits;
  limits.host_bytes = 2 * gib;
  const memory_budget budget(limits, {});
  EXPECT_EQ(budget.host_bytes(), std::min(2 * gib, machine_host_bytes()));
  EXPECT_EQ(budget.pinned_bytes(), budget.host_bytes() / 8);
  // A sixteenth under a small limit, never more than 1 GiB.
  EXPECT_EQ(budget.host_scratch_bytes(), std::min(gib, budget.host_bytes() / 16));
  limits.host_bytes = 1024 * gib;
  EXPECT_LE(memory_budget(limits, {}).host_scratch_bytes(), gib);
}

TEST(memory_budget, device_bytes_leave_headroom_and_obey_the_limit) {
  const memory_budget unlimited;
  EXPECT_EQ(unlimited.device_bytes(0), 0u);
  EXPECT_EQ(unlimited.device_bytes(512 * mib), 0u);
  EXPECT_EQ(unlimited.device_bytes(512 * mib + 1000), 900u);
  EXPECT_EQ(unlimited.device_bytes(80 * gib), (80 * gib - 512 * mib) / 10 * 9);
  memory_limits limits;
  limits.device_bytes = 4 * gib;
  const memory_budget limited(limits, {});
  EXPECT_EQ(limited.device_bytes(80 * gib), (4 * gib - 512 * mib) / 10 * 9);
  // The limit never adds memory the device does not have.
  EXPECT_EQ(limited.device_bytes(2 * gib), (2 * gib - 512 * mib) / 10 * 9);
}

TEST(memory_budget, overrides_are_read_from_the_parameters) {
  const memory_overrides none = read_memory_overrides({});
  EXPECT_EQ(none.segment_ids, 0u);
  EXPECT_EQ(none.chunk_ids, 0u);
  EXPECT_EQ(none.batch_pairs, 0u);
  EXPECT_EQ(none.batches, 0u);
  const memory_overrides some = read_memory_overrides(
      {{"segment_ids", "7"}, {"chunk_ids", "3"}, {"batch_pairs", "100"}, {"batches", "4"}});
  EXPECT_EQ(some.segment_ids, 7u);
  EXPECT_EQ(some.chunk_ids, 3u);
  EXPECT_EQ(some.batch_pairs, 100u);
  EXPECT_EQ(some.batches, 4u);
  EXPECT_THROW(read_memory_overrides({{"segment_ids", "0"}}), invalid_argument);
  EXPECT_THROW(read_memory_overrides({{"chunk_ids", "x"}}), invalid_argument);
}

TEST(memory_budget, resources_carry_the_limits) {
  resources res(1);
  EXPECT_EQ(res.memory().host_bytes, 0u);
  EXPECT_EQ(res.memory().device_bytes, 0u);
  res.set_memory({3 * gib, 5 * gib});
  EXPECT_EQ(res.memory().host_bytes, 3 * gib);
  EXPECT_EQ(res.memory().device_bytes, 5 * gib);
}

// A CPU engine under a tiny host limit plans its scratch within it (no per-thread count arrays,
// no stored ranges) and still answers exactly. Several threads on a lattice with ties at eps:
// the shared count array's adds must all be atomic (a worker once added to it plainly).
TEST(memory_budget, cpu_grid_under_a_tiny_host_limit_counts_the_same) {
  const std::vector<double> coords = lattice(6000);
  const dataset_view view{coords.data(), coords.size() / 2, 2};
  join_options opt;
  opt.eps = 0.05;
  opt.engine = "brute-cpu";
  resources oracle_res(2);
  count_sink oracle;
  self_join(oracle_res, view, opt, oracle);
  ASSERT_GT(oracle.total(), 0u);
  opt.engine = "cpu-grid";
  for (int round = 0; round < 8; ++round) {
    resources tight(4);
    tight.set_memory({64 * 1024, 0});
    count_sink counts(true);
    self_join(tight, view, opt, counts);
    ASSERT_EQ(counts.total(), oracle.total()) << "round " << round;
  }
}


// The neighbour table's size is known once the rows are counted: a table larger than what the
// limit leaves beside the join's own memory is refused then, with what it needs and what to do,
// before any of it is allocated.
TEST(memory_budget, an_in_memory_table_over_the_limit_is_refused_before_allocation) {
  const std::vector<double> coords = lattice(3000);
  const dataset_view view{coords.data(), coords.size() / 2, 2};
  join_options opt;
  opt.eps = 0.05;
  opt.engine = "cpu-grid";
  resources res(2);
  // cpu-grid's path needs 117 KiB here (its points, index, counts and row cursors); its table,
  // about 300 KiB, is what does not fit.
  res.set_memory({256 * 1024, 0});
  csr_sink table;
  try {
    self_join(res, view, opt, table);
    FAIL() << "expected out_of_memory";
  } catch (const out_of_memory& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the neighbour table needs"), std::string::npos) << what;
    EXPECT_NE(what.find("are allowed (the memory limit, less "), std::string::npos) << what;
    EXPECT_NE(what.find("--output FILE"), std::string::npos) << what;
  }
  EXPECT_EQ(table.table().offsets.size(), 0u) << "the table was allocated before the refusal";
  // The same join counted, or with room, goes through.
  count_sink counts;
  self_join(res, view, opt, counts);
  EXPECT_GT(counts.total(), 0u);
  res.set_memory({0, 0});
  csr_sink roomy;
  self_join(res, view, opt, roomy);
  EXPECT_EQ(roomy.table().neighbors.size(), counts.total());
}


// What a sink's caller makes of the table afterwards (csr_sink's bytes_added_per_pair: a graph's
// data array) is held to the limit with the table, rows or pairs, before any of it is allocated.
TEST(memory_budget, bytes_the_caller_adds_per_pair_are_held_with_the_table) {
  const std::vector<double> coords = lattice(3000);
  const dataset_view view{coords.data(), coords.size() / 2, 2};
  join_options opt;
  opt.eps = 0.05;
  count_sink counts;
  resources roomy(2);
  self_join(roomy, view, opt, counts);
  const std::uint64_t pairs = counts.total();
  ASSERT_GT(pairs, 10 * view.n);
  // cpu-grid fills rows; super-ego and cpu-rtree hand over pairs.
  for (const char* engine : {"cpu-grid", "super-ego", "cpu-rtree"}) {
    SCOPED_TRACE(engine);
    opt.engine = engine;
    // Room for the table (4 bytes a pair, 12 while collected) and half of 64 bytes more a pair.
    const std::uint64_t limit = 1 * mib + pairs * (12 + 32);
    resources res(2);
    res.set_memory({limit, 0});
    csr_sink plain(false, 0);
    self_join(res, view, opt, plain);
    EXPECT_EQ(plain.table().neighbors.size(), pairs);
    csr_sink graph(false, 64);
    try {
      self_join(res, view, opt, graph);
      FAIL() << "expected out_of_memory";
    } catch (const out_of_memory& e) {
      EXPECT_NE(std::string(e.what()).find("(the memory limit"), std::string::npos) << e.what();
    }
    EXPECT_EQ(graph.table().neighbors.size(), 0u) << "the table was allocated before the refusal";
  }
}

// An engine that emits pairs into a sink that keeps them cannot size the result first: the
// pairs are bounded as they arrive, and the join stops with the same message, not the machine.
TEST(memory_budget, pairs_kept_in_memory_are_bounded_as_they_arrive) {
  const std::vector<double> coords = lattice(3000);
  const dataset_view view{coords.data(), coords.size() / 2, 2};
  join_options opt;
  opt.eps = 0.05;
  for (const char* engine : {"super-ego", "cpu-rtree", "cpu-grid"}) {
    SCOPED_TRACE(engine);
    opt.engine = engine;
    resources res(2);
    res.set_memory({64 * 1024, 0});
    unique_pairs_sink kept;
    try {
      self_join(res, view, opt, kept);
      FAIL() << "expected out_of_memory";
    } catch (const out_of_memory& e) {
      EXPECT_NE(std::string(e.what()).find("64.0 KiB are allowed"), std::string::npos) << e.what();
    }
    // A sink that does not keep the pairs is not bounded by them.
    count_sink counts;
    self_join(res, view, opt, counts);
    EXPECT_GT(counts.total(), 0u);
  }
}

// A charge is refused as a result over the limit is, and takes its bytes off what is available
// while it lives; a hold keeps them for the rest of the join (the budget's life).
TEST(memory_budget, charges_come_off_what_is_available_while_they_live) {
  memory_limits limits;
  limits.host_bytes = 10000;
  memory_budget budget(limits, {});
  {
    const host_charge cursors = budget.charge_host(6000, "the row cursors");
    EXPECT_EQ(cursors.bytes(), 6000u);
    EXPECT_EQ(budget.host_available(), 4000u);
    EXPECT_THROW(budget.require_host(4001, "the neighbour table"), out_of_memory);
    EXPECT_NO_THROW(budget.require_host(4000, "the neighbour table"));
    host_charge moved = budget.charge_host(1000, "more");
    const host_charge taken = std::move(moved);
    EXPECT_EQ(budget.host_charged(), 7000u);
  }
  EXPECT_EQ(budget.host_charged(), 0u);
  EXPECT_EQ(budget.host_available(), 10000u);
  EXPECT_THROW((void)budget.charge_host(10001, "the row cursors"), out_of_memory);
  EXPECT_EQ(budget.host_charged(), 0u);
  budget.hold_host(2500, "the neighbour table");
  try {
    (void)budget.charge_host(7501, "the row cursors");
    FAIL() << "expected out_of_memory";
  } catch (const out_of_memory& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the row cursors needs 7.3 KiB of host memory but 7.3 KiB are allowed "
                        "(the memory limit, less 2.4 KiB the join holds already)"),
              std::string::npos)
        << what;
  }
}

// The rows an engine writes in place need their cursors (8 bytes a row) or a row scatter's
// spans (16) beside the table and the rest of the engine's path (its points and their copies,
// its index, its counts): a limit that holds the table and the cursors alone is refused before
// the work with the path's figure, which names the cursors; room for the path goes through.
TEST(memory_budget, row_cursors_beside_an_in_memory_table_are_charged) {
  const int n = 1000;
  const std::vector<double> coords = lattice(n);
  const dataset_view view{coords.data(), coords.size() / 2, 2};
  const std::uint64_t table = (n + 1) * sizeof(std::uint64_t);  // no pair within eps
  struct engine_case {
    const char* engine;
    param_map params;
    std::uint64_t bookkeeping;
  };
  for (const engine_case& c :
       std::vector<engine_case>{{"super-ego", {}, 8u * n},
                                {"cpu-grid", {{"fill", "halved"}}, 8u * n},
                                {"cpu-grid", {{"fill", "full"}}, 16u * n}}) {
    SCOPED_TRACE(testing::Message() << c.engine << " " << c.params.size());
    join_options opt;
    opt.eps = 1e-4;
    opt.engine = c.engine;
    opt.params = c.params;
    resources res(2);
    res.set_memory({table + c.bookkeeping, 0});
    csr_sink refused;
    try {
      self_join(res, view, opt, refused);
      FAIL() << "expected out_of_memory";
    } catch (const out_of_memory& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("the join itself needs"), std::string::npos) << what;
      EXPECT_NE(what.find(concat("the row cursors ", human_bytes(c.bookkeeping), ")")),
                std::string::npos)
          << what;
    }
    EXPECT_EQ(refused.table().offsets.size(), 0u);
    // The path at 1000 points is under 96 KiB for both (cpu-grid's schedule has a cell a point).
    res.set_memory({table + c.bookkeeping + 96 * 1024, 0});
    csr_sink kept;
    const join_stats stats = self_join(res, view, opt, kept);
    EXPECT_EQ(stats.pairs, 0u);
    EXPECT_EQ(kept.table().offsets.size(), static_cast<std::size_t>(n) + 1);
  }
}

// A CSR table in memory that notes what the join had charged to its budget when the rows were
// laid out (after the count, before the fill's cursors).
class watched_table final : public result_sink {
 public:
  void begin(const sink_info& info) override { table.begin(info); }
  void consume(std::span<const index_pair> pairs) override { table.consume(pairs); }
  sink_request request() const override {
    return {.form = result_form::table, .rows_in_place = true};
  }
  row_destination consume_counts(const count_batch& counts) override {
    charged_at_rows = budget->host_charged();
    return table.consume_counts(counts);
  }
  void finish() override { table.finish(); }
  csr_sink table;
  const memory_budget* budget = nullptr;
  std::uint64_t charged_at_rows = 0;
};

// cpu-grid's and super-ego's paths charge every sizeable buffer where it is made and give it
// back with it: the points they were given, their index and sorted copy, their counts while the
// rows are laid out, and the row cursors on top during the fill; nothing is left charged after.
// What a CPU engine had charged when the rows were laid out, its peak, and what it still held
// when it returned, for a self-join of `view` into a table in memory under a 256 MiB limit.
struct charges_seen {
  std::uint64_t at_rows = 0, peak = 0, after = 0;
};

charges_seen charges_of(const std::string& engine_name, const param_map& params,
                        dataset_view view) {
  const engine* e = find_engine(engine_name);
  EXPECT_NE(e, nullptr);
  if (e == nullptr) return {};
  join_options opt;
  opt.eps = 0.02;
  opt.engine = engine_name;
  opt.params = params;
  const auto parsed = e->parse_params(opt.params);
  resources res(2);
  join_stats stats;
  memory_limits limits;
  limits.host_bytes = 256 * mib;
  watched_table sink;
  join_request req{res, view, view, true, opt, sink, stats, memory_budget(limits, {}),
                   parsed.get()};
  sink.budget = &req.budget;
  sink.begin({view.n, view.n, true, false, limits.host_bytes});
  EXPECT_EQ(req.budget.host_charged(), 0u);
  e->run(req);
  sink.finish();
  EXPECT_GT(sink.table.table().neighbors.size(), view.n);
  return {sink.charged_at_rows, req.budget.host_charged_peak(), req.budget.host_charged()};
}

TEST(memory_budget, cpu_engines_charge_their_buffers_while_they_live_and_give_them_back) {
  const std::size_t n = 20000;
  const std::vector<double> coords = lattice(static_cast<int>(n));
  const dataset_view view{coords.data(), n, 2};
  const std::uint64_t given = n * 2 * sizeof(double);
  for (const char* fill : {"halved", "full"}) {
    SCOPED_TRACE(fill);
    const charges_seen seen = charges_of("cpu-grid", {{"fill", fill}}, view);
    const std::uint64_t index = n * sizeof(std::uint32_t);  // the permutation, cells beside
    const std::uint64_t block = n * 2 * sizeof(double);     // float64 columns
    const std::uint64_t counts = 2 * n * sizeof(std::uint32_t);  // by position and by query
    EXPECT_GE(seen.at_rows, given + index + block + counts);
    // The cursors (8 bytes a row halved, 16 under FULL) came on top of what stayed charged.
    const std::uint64_t cursors = std::string(fill) == "halved" ? 8 * n : 16 * n;
    EXPECT_GE(seen.peak, given + index + block + cursors);
    EXPECT_EQ(seen.after, 0u);
  }
  // super-ego alike: its points in EGO order (rows, columns, ids) and its counts (8 bytes a
  // query, 4 by position, 4 by query) while the rows are laid out, then the cursors.
  const charges_seen seen = charges_of("super-ego", {}, view);
  const std::uint64_t sorted = 2 * n * 2 * sizeof(double) + n * sizeof(std::uint32_t);
  EXPECT_GE(seen.at_rows, given + sorted + 16 * n);
  EXPECT_GE(seen.peak, given + sorted + 12 * n + 8 * n);
  EXPECT_EQ(seen.after, 0u);
}

// A limit that holds what the result needs (nothing: it streams to a file) and the row cursors,
// but not the rest of cpu-grid's path, is refused before the index is built, with the path's
// figure and its items: the cursors alone were charged before, and the join ran past the limit.
TEST(memory_budget, a_limit_too_small_for_the_path_is_refused_with_what_the_path_needs) {
  const std::size_t n = 20000;
  const std::vector<double> coords = lattice(static_cast<int>(n));
  const dataset_view view{coords.data(), n, 2};
  join_options opt;
  opt.eps = 0.02;
  opt.engine = "cpu-grid";
  resources res(1);
  // Above the row cursors (16 bytes a row under FULL) and the points given, below the path.
  res.set_memory({40 * n, 0});
  const std::string path = testing::TempDir() + "memory_budget_path.csr";
  csr_file_sink file(path);
  try {
    self_join(res, view, opt, file);
    FAIL() << "expected out_of_memory";
  } catch (const out_of_memory& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the join itself needs "), std::string::npos) << what;
    EXPECT_NE(what.find("beside its result (the points given 312.5 KiB, "), std::string::npos)
        << what;
    EXPECT_NE(what.find("the points in cell order 312.8 KiB, the counts 78.1 KiB, the row "
                        "cursors 312.5 KiB) but 781.2 KiB are allowed (the memory limit); the "
                        "result itself streams out and needs none"),
              std::string::npos)
        << what;
  }
  EXPECT_FALSE(std::ifstream(path).good());
  // What it said is enough.
  res.set_memory({64 * n + 64 * 1024, 0});
  csr_file_sink enough(path);
  const join_stats stats = self_join(res, view, opt, enough);
  EXPECT_GT(stats.pairs, n);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace epsjoin::detail
