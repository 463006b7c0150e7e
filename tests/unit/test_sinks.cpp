// Sinks: CSR symmetry and layout, unique pairs vs CSR, counts, the streaming pair file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "core/counting_sink.hpp"
#include "core/row_subset_sink.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/epsjoin.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/sink.hpp"
#include "support/temp_dir.hpp"
#include "results/handover.hpp"

namespace {

using epsjoin::index_pair;

// A symmetric result on 5 points: 0-1, 0-2, 3-4, given in two batches from two threads.
const std::vector<index_pair> batch_a = {{0, 1}, {1, 0}, {2, 0}};
const std::vector<index_pair> batch_b = {{0, 2}, {3, 4}, {4, 3}};

void feed(epsjoin::result_sink& sink, bool self = true, bool include_self = false) {
  sink.begin({5, 5, self, include_self});
  std::thread other([&] { sink.consume(batch_b); });
  sink.consume(batch_a);
  other.join();
  sink.finish();
}

TEST(csr_sink, builds_sorted_symmetric_rows) {
  epsjoin::csr_sink sink(true);
  feed(sink);
  const auto& t = sink.table();
  ASSERT_EQ(t.n_queries(), 5u);
  EXPECT_EQ(t.offsets, (epsjoin::offset_vector{0, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t.neighbors, (epsjoin::id_vector{1, 2, 0, 0, 4, 3}));
  for (std::uint32_t i = 0; i < 5; ++i) {
    for (std::uint32_t j : t.row(i)) {
      const auto back = t.row(j);
      EXPECT_NE(std::find(back.begin(), back.end(), i), back.end()) << i << "->" << j;
    }
  }
}

TEST(csr_sink, takes_rows_in_place_and_sorts_them) {
  epsjoin::csr_sink sink(true);
  sink.begin({4, 4, true, false});
  ASSERT_TRUE(sink.request().rows_in_place);
  const std::vector<std::uint32_t> counts = {2, 0, 3, 1};
  const epsjoin::row_destination dest = epsjoin::detail::lay_out_rows(sink, counts);
  const std::vector<std::vector<std::uint32_t>> rows = {{3, 2}, {}, {1, 0, 3}, {2}};
  std::vector<std::thread> writers;
  for (std::size_t q = 0; q < rows.size(); ++q) {
    writers.emplace_back([&, q] { std::copy(rows[q].begin(), rows[q].end(), dest.neighbors + dest.starts[q]); });
  }
  for (auto& w : writers) w.join();
  sink.finish();
  const auto& t = sink.table();
  EXPECT_EQ(t.offsets, (epsjoin::offset_vector{0, 2, 2, 5, 6}));
  EXPECT_EQ(t.neighbors, (epsjoin::id_vector{2, 3, 0, 1, 3, 2}));
}

// A join without pairs still gets a table: every CPU engine, one to five points far apart
// (cpu-grid crashed on this once, taking the empty table's null pointer for "no rows").
TEST(csr_sink, a_join_without_pairs_gives_an_empty_table) {
  const std::vector<double> coords = {0.0, 0.0, 0.3, 0.0, 0.0, 0.3, 0.6, 0.6, 0.9, 0.1};
  for (const char* engine : {"brute-cpu", "cpu-grid", "super-ego", "cpu-rtree"}) {
    for (std::size_t n = 1; n <= 5; ++n) {
      SCOPED_TRACE(std::string(engine) + ", n = " + std::to_string(n));
      epsjoin::resources res(2);
      epsjoin::join_options opt;
      opt.eps = 0.01;
      opt.engine = engine;
      epsjoin::csr_sink sink(true);
      epsjoin::self_join(res, epsjoin::dataset_view{coords.data(), n, 2}, opt, sink);
      EXPECT_EQ(sink.table().n_queries(), n);
      EXPECT_EQ(sink.table().n_pairs(), 0u);
    }
  }
}

TEST(csr_sink, refuses_pairs_after_rows_and_rows_of_the_wrong_size) {
  epsjoin::csr_sink sink;
  sink.begin({3, 3, true, false});
  EXPECT_THROW(epsjoin::detail::lay_out_rows(sink, std::vector<std::uint32_t>{1, 1}), epsjoin::error);
  epsjoin::detail::lay_out_rows(sink, std::vector<std::uint32_t>{0, 0, 0});
  EXPECT_THROW(sink.consume(batch_a), epsjoin::error);
  epsjoin::count_sink counts;
  EXPECT_FALSE(counts.request().rows_in_place);
  EXPECT_THROW(epsjoin::detail::lay_out_rows(counts, std::vector<std::uint32_t>{}), epsjoin::error);
}

TEST(unique_pairs_sink, keeps_each_pair_once_and_matches_csr) {
  epsjoin::unique_pairs_sink sink;
  feed(sink);
  EXPECT_EQ(sink.pairs(), (std::vector<index_pair>{{0, 1}, {0, 2}, {3, 4}}));
  epsjoin::csr_sink csr;
  feed(csr);
  EXPECT_EQ(2 * sink.pairs().size(), csr.table().n_pairs());
}

TEST(unique_pairs_sink, keeps_everything_in_a_cross_join_and_self_pairs_when_asked) {
  epsjoin::unique_pairs_sink cross;
  feed(cross, false);
  EXPECT_EQ(cross.pairs().size(), 6u);
  epsjoin::unique_pairs_sink with_self;
  with_self.begin({2, 2, true, true});
  with_self.consume(std::vector<index_pair>{{0, 0}, {1, 1}, {0, 1}, {1, 0}});
  with_self.finish();
  EXPECT_EQ(with_self.pairs(), (std::vector<index_pair>{{0, 0}, {0, 1}, {1, 1}}));
}

TEST(count_sink, counts_pairs_and_counts_the_same) {
  epsjoin::count_sink sink(true);
  feed(sink);
  EXPECT_EQ(sink.total(), 6u);
  EXPECT_EQ(sink.per_point(), (std::vector<std::uint64_t>{2, 1, 1, 1, 1}));
  epsjoin::count_sink by_counts(true);
  by_counts.begin({5, 5, true, false});
  const std::vector<std::uint32_t> ids = {0, 1, 2, 3, 4, 0};
  const std::vector<std::uint32_t> counts = {1, 1, 1, 1, 1, 1};
  epsjoin::detail::hand_counts(by_counts, ids, counts);
  by_counts.finish();
  EXPECT_EQ(by_counts.per_point(), sink.per_point());
  EXPECT_EQ(by_counts.total(), sink.total());
}

TEST(count_sink, takes_a_total_only_when_it_keeps_no_counts_per_point) {
  epsjoin::count_sink total_only;
  total_only.begin({5, 5, true, false});
  ASSERT_EQ(total_only.request().total_only_below(), SIZE_MAX);
  epsjoin::detail::hand_total(total_only, 7);
  const std::vector<std::uint32_t> ids = {0, 4}, counts = {2, 3};
  epsjoin::detail::hand_counts(total_only, ids, counts);
  EXPECT_EQ(total_only.total(), 12u);

  epsjoin::count_sink per_point(true);
  per_point.begin({5, 5, true, false});
  EXPECT_FALSE(per_point.request().total_only_below());
  EXPECT_THROW(epsjoin::detail::hand_total(per_point, 1), epsjoin::error);
  epsjoin::csr_sink pairs;
  EXPECT_FALSE(pairs.request().total_only_below());
  EXPECT_THROW(epsjoin::detail::hand_total(pairs, 1), epsjoin::error);
}

TEST(count_sink, totals_pass_through_dispatch_and_a_shard_of_own_points) {
  epsjoin::count_sink total_only;
  epsjoin::detail::counting_sink counted(total_only);
  EXPECT_EQ(counted.request().total_only_below(), SIZE_MAX);
  // A shard of 3 own points (caller's ids 7, 2, 9) and 2 halo points: its total is its own
  // points' counts, which are the local ids below 3.
  const std::vector<std::uint32_t> shard_ids = {7, 2, 9, 4, 5};
  epsjoin::detail::row_subset_sink shard(counted, shard_ids, 3, shard_ids, {});
  EXPECT_EQ(shard.request().total_only_below(), 3u);
  epsjoin::detail::hand_total(shard, 11);
  EXPECT_EQ(shard.pairs(), 11u);
  EXPECT_EQ(counted.pairs(), 11u);
  EXPECT_EQ(total_only.total(), 11u);

  // Where the caller counts query by query, the shard does too.
  epsjoin::count_sink per_point(true);
  epsjoin::detail::row_subset_sink by_query(per_point, shard_ids, 3, shard_ids, {});
  EXPECT_FALSE(by_query.request().total_only_below());
}

TEST(result_sink, pair_sinks_refuse_counts) {
  epsjoin::csr_sink sink;
  sink.begin({1, 1, true, false});
  const std::vector<std::uint32_t> one = {0};
  EXPECT_THROW(epsjoin::detail::hand_counts(sink, one, one), epsjoin::error);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The protocol: each sink takes the batches its request names and refuses the others with an
// error that names the broken request, rather than dropping them.
TEST(result_sink, each_sink_refuses_batches_its_request_does_not_name) {
  const std::vector<std::uint32_t> ids = {0, 1}, counts = {1, 1};
  const std::vector<std::uint64_t> offsets = {0, 1, 2};
  const epsjoin::row_segment block{.offsets = offsets, .neighbors = ids};
  const epsjoin::row_segment unordered{.queries = ids, .neighbors = ids, .unordered = true};
  epsjoin::csr_sink table;
  table.begin({2, 2, true, false});
  EXPECT_THROW(table.consume_rows(block), epsjoin::error);
  EXPECT_THROW(table.consume_counts({.queries = ids, .counts = counts}), epsjoin::error);
  epsjoin::unique_pairs_sink pairs;
  pairs.begin({2, 2, true, false});
  EXPECT_THROW(pairs.consume_rows(block), epsjoin::error);
  EXPECT_THROW(epsjoin::detail::lay_out_rows(pairs, counts), epsjoin::error);
  epsjoin::count_sink per_point(true);
  per_point.begin({2, 2, true, false});
  EXPECT_THROW(per_point.consume_rows(unordered), epsjoin::error);
  EXPECT_THROW(epsjoin::detail::lay_out_rows(per_point, counts), epsjoin::error);
  epsjoin::device_csr_sink on_device;
  on_device.begin({2, 2, true, false});
  EXPECT_THROW(on_device.consume_rows(block), epsjoin::error);  // host rows, not a device table
}

// Unordered pairs arrive as one-neighbour rows; each stands for both orientations, and the
// dispatch wrapper counts it twice.
TEST(result_sink, unordered_pairs_reach_a_unique_pairs_sink_as_rows) {
  epsjoin::unique_pairs_sink kept;
  epsjoin::detail::counting_sink counted(kept);
  counted.begin({5, 5, true, false});
  const std::vector<index_pair> found = {{3, 4}, {0, 2}, {0, 1}};
  epsjoin::detail::hand_unordered(counted, found);
  counted.finish();
  EXPECT_EQ(counted.pairs(), 6u);
  EXPECT_EQ(kept.pairs(), (std::vector<index_pair>{{0, 1}, {0, 2}, {3, 4}}));
}

TEST(pair_file_sink, streams_npy_with_exact_header) {
  const std::string path = epsjoin::test::temp_path("pairs.npy");
  {
    epsjoin::pair_file_sink sink(path, epsjoin::pair_file_format::npy);
    feed(sink);
    EXPECT_EQ(sink.written(), 3u);
  }
  const std::string bytes = slurp(path);
  ASSERT_GE(bytes.size(), 128u);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  const std::size_t header = 10 + static_cast<unsigned char>(bytes[8]) +
                             256 * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ(header % 64, 0u);
  EXPECT_NE(bytes.find("'shape': (3, 2)"), std::string::npos);
  ASSERT_EQ(bytes.size(), header + 3 * 8);
  std::vector<index_pair> pairs(3);
  std::memcpy(pairs.data(), bytes.data() + header, 24);
  std::sort(pairs.begin(), pairs.end());
  EXPECT_EQ(pairs, (std::vector<index_pair>{{0, 1}, {0, 2}, {3, 4}}));
  std::remove(path.c_str());
}

TEST(pair_file_sink, streams_csv_and_reports_unwritable_paths) {
  const std::string path = epsjoin::test::temp_path("pairs.csv");
  {
    epsjoin::pair_file_sink sink(path, epsjoin::pair_file_format::csv, true);
    feed(sink);
    EXPECT_EQ(sink.written(), 6u);
  }
  const std::string text = slurp(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6);
  EXPECT_NE(text.find("3,4\n"), std::string::npos);
  std::remove(path.c_str());

  // The file is created with the sink, so a bad path fails before any join runs.
  try {
    epsjoin::pair_file_sink bad("/nonexistent-dir/x.npy", epsjoin::pair_file_format::npy);
    FAIL() << "expected io_error";
  } catch (const epsjoin::io_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.npy"), std::string::npos);
  }
}

// A sink that never finishes (an error or a stop on the way) leaves nothing at its path, and
// no temporary file beside it either.
TEST(pair_file_sink, leaves_no_file_unless_finished) {
  const std::string dir = epsjoin::test::temp_path("unfinished");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/pairs.npy";
  {
    epsjoin::pair_file_sink sink(path, epsjoin::pair_file_format::npy);
    sink.begin({4, 4, true, false});
    const std::vector<epsjoin::index_pair> pairs = {{0, 1}, {1, 0}};
    sink.consume(pairs);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "an unfinished sink left a file in " << dir;
  {
    epsjoin::pair_file_sink sink(path, epsjoin::pair_file_format::npy);
    sink.begin({4, 4, true, false});
    // Before finish() the target does not exist: only complete files appear under its name.
    EXPECT_FALSE(std::filesystem::exists(path));
    sink.finish();
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Rows written through the file's mapping give the bytes write_csr gives for the same table,
// whether an engine delivers rows (cpu-grid) or pairs (cpu-rtree), with or without self pairs.
TEST(csr_file_sink, writes_what_write_csr_writes) {
  std::vector<double> coords;
  for (int i = 0; i < 4000; ++i) {
    coords.push_back((i * 7919 % 4000) / 4000.0);
    coords.push_back((i * 104729 % 4000) / 4000.0);
  }
  const epsjoin::dataset_view view{coords.data(), coords.size() / 2, 2};
  const std::string dir = epsjoin::test::temp_path("csr_file_sink");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* engine : {"cpu-grid", "cpu-rtree"}) {
    for (const bool include_self : {false, true}) {
      SCOPED_TRACE(std::string(engine) + (include_self ? " with self pairs" : ""));
      epsjoin::join_options opt;
      opt.eps = 0.03;
      opt.engine = engine;
      opt.include_self = include_self;
      epsjoin::resources res(2);
      epsjoin::csr_sink table(true);
      epsjoin::self_join(res, view, opt, table);
      epsjoin::write_csr(dir + "/expected.csr", table.table());
      {
        epsjoin::csr_file_sink file(dir + "/written.csr", true);
        epsjoin::self_join(res, view, opt, file);
      }
      EXPECT_EQ(file_bytes(dir + "/written.csr"), file_bytes(dir + "/expected.csr"));
    }
  }
  // An empty input writes the empty table as write_csr does.
  {
    epsjoin::join_options opt;
    opt.eps = 0.03;
    opt.engine = "cpu-grid";
    epsjoin::resources res(1);
    epsjoin::csr_file_sink file(dir + "/empty.csr");
    epsjoin::self_join(res, epsjoin::dataset_view{coords.data(), 0, 2}, opt, file);
  }
  EXPECT_EQ(epsjoin::read_csr(dir + "/empty.csr").n_pairs(), 0u);
  std::filesystem::remove_all(dir);
}

TEST(csr_file_sink, leaves_no_file_unless_finished) {
  const std::string dir = epsjoin::test::temp_path("csr_unfinished");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    epsjoin::csr_file_sink sink(dir + "/t.csr");
    sink.begin({3, 3, true, false});
    const std::vector<std::uint32_t> counts = {1, 0, 1};
    const epsjoin::row_destination dest = epsjoin::detail::lay_out_rows(sink, counts);
    dest.neighbors[dest.starts[0]] = 2;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_THROW(epsjoin::csr_file_sink("/nonexistent-dir/t.csr"), epsjoin::io_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
