// The row-block sink (rows handed to a callback in query order) and the CSR file sink's row
// blocks: the protocol, its misuse, and the CPU engines, which reach a row-block sink through
// its collected rows or pairs, against the oracle's table.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "epsjoin/epsjoin.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "support/seed.hpp"
#include "support/temp_dir.hpp"
#include "results/handover.hpp"

namespace {

// Rebuilds a table from its blocks, checking the order the contract promises.
struct block_collector {
  epsjoin::neighbor_table table;
  std::size_t blocks = 0;
  epsjoin::row_block_sink::callback callback() {
    table.offsets.assign(1, 0);
    table.neighbors.clear();
    return [this](std::size_t first, std::span<const std::uint64_t> offsets,
                  std::span<const std::uint32_t> ids) {
      ASSERT_EQ(first + 1, table.offsets.size()) << "a block out of order";
      ASSERT_EQ(offsets.front(), table.offsets.back()) << "a block that does not start where the last ended";
      ASSERT_EQ(ids.size(), offsets.back() - offsets.front());
      table.offsets.insert(table.offsets.end(), offsets.begin() + 1, offsets.end());
      table.neighbors.insert(table.neighbors.end(), ids.begin(), ids.end());
      ++blocks;
    };
  }
};

epsjoin::dataset random_points(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n * d);
  // A lattice of exact binary fractions: many pairs lie at exactly eps.
  for (double& x : v) x = static_cast<double>(rng() % 20) * 0.125;
  return epsjoin::dataset(std::move(v), d);
}

epsjoin::neighbor_table oracle(const epsjoin::dataset& pts, double eps, bool include_self) {
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = eps;
  opt.engine = "brute-cpu";
  opt.include_self = include_self;
  epsjoin::csr_sink sink(true);
  epsjoin::self_join(res, pts.view(), opt, sink);
  return sink.release();
}

TEST(row_block_sink, cpu_engines_deliver_the_oracle_table_in_query_order) {
  const auto pts = random_points(700, 2, epsjoin::test::test_seed());
  for (const bool include_self : {false, true}) {
    const epsjoin::neighbor_table expected = oracle(pts, 0.25, include_self);
    for (const char* engine : {"cpu-grid", "super-ego", "brute-cpu", "cpu-rtree"}) {
      block_collector got;
      epsjoin::row_block_sink sink(got.callback(), true);
      epsjoin::resources res;
      epsjoin::join_options opt;
      opt.eps = 0.25;
      opt.engine = engine;
      opt.include_self = include_self;
      epsjoin::self_join(res, pts.view(), opt, sink);
      EXPECT_EQ(got.table.offsets, expected.offsets) << engine << " include_self " << include_self;
      EXPECT_TRUE(got.table.neighbors == expected.neighbors) << engine;
      EXPECT_GE(got.blocks, 1u);
    }
  }
}

TEST(row_block_sink, streamed_blocks_are_checked_and_sorted) {
  block_collector got;
  epsjoin::row_block_sink sink(got.callback(), true);
  sink.begin({4, 4, true, false});
  const std::vector<std::uint32_t> counts = {2, 0, 1, 3};
  epsjoin::detail::begin_row_blocks(sink, counts);
  const std::vector<std::uint64_t> first = {0, 2, 2};
  const std::vector<std::uint32_t> first_ids = {3, 1};
  epsjoin::detail::hand_row_block(sink, 0, first, first_ids);
  // Query 3 before query 2: refused.
  const std::vector<std::uint64_t> skipped = {3, 6};
  const std::vector<std::uint32_t> skipped_ids = {2, 1, 0};
  EXPECT_THROW(epsjoin::detail::hand_row_block(sink, 3, skipped, skipped_ids), epsjoin::error);
  const std::vector<std::uint64_t> rest = {2, 3, 6};
  const std::vector<std::uint32_t> rest_ids = {0, 2, 1, 0};
  epsjoin::detail::hand_row_block(sink, 2, rest, rest_ids);
  sink.finish();
  EXPECT_EQ(got.table.offsets, (epsjoin::offset_vector{0, 2, 2, 3, 6}));
  EXPECT_EQ(got.table.neighbors, (epsjoin::id_vector{1, 3, 0, 0, 1, 2}));
}

TEST(row_block_sink, blocks_that_stop_short_of_the_last_query_fail_at_finish) {
  block_collector got;
  epsjoin::row_block_sink sink(got.callback());
  sink.begin({3, 3, true, false});
  const std::vector<std::uint32_t> counts = {0, 0, 0};
  epsjoin::detail::begin_row_blocks(sink, counts);
  const std::vector<std::uint64_t> offsets = {0, 0};
  epsjoin::detail::hand_row_block(sink, 0, offsets, {});
  EXPECT_THROW(sink.finish(), epsjoin::error);
}

TEST(csr_file_sink, row_blocks_write_the_same_file_as_rows) {
  const auto dir = epsjoin::test::temp_dir() / "epsjoin-row-blocks";
  std::filesystem::create_directories(dir);
  const std::vector<std::uint32_t> counts = {2, 0, 1, 3, 0};
  const std::vector<std::uint64_t> offsets = {0, 2, 2, 3, 6, 6};
  const std::vector<std::uint32_t> ids = {4, 1, 0, 2, 0, 1};
  const std::string by_rows = (dir / "rows.csr").string(), by_blocks = (dir / "blocks.csr").string();
  {
    epsjoin::csr_file_sink sink(by_rows, true);
    sink.begin({5, 5, true, false});
    const epsjoin::row_destination dest = epsjoin::detail::lay_out_rows(sink, counts);
    std::copy(ids.begin(), ids.end(), dest.neighbors);
    sink.finish();
  }
  {
    epsjoin::csr_file_sink sink(by_blocks, true);
    sink.begin({5, 5, true, false});
    epsjoin::detail::begin_row_blocks(sink, counts);
    epsjoin::detail::hand_row_block(sink, 0, {offsets.data(), 3}, {ids.data(), 2});
    epsjoin::detail::hand_row_block(sink, 2, {offsets.data() + 2, 4}, {ids.data() + 2, 4});
    sink.finish();
  }
  const epsjoin::neighbor_table a = epsjoin::read_csr(by_rows), b = epsjoin::read_csr(by_blocks);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_TRUE(a.neighbors == b.neighbors);
  EXPECT_EQ(b.neighbors, (epsjoin::id_vector{1, 4, 0, 0, 1, 2}));
  std::filesystem::remove_all(dir);
}

// Blocks of tens of MB, as the multi-device join and the GPU engines stream them: every id lands
// at its row's place in the file.
TEST(csr_file_sink, large_row_blocks_are_written_exactly) {
  const auto dir = epsjoin::test::temp_dir() / "epsjoin-row-blocks-large";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "large.csr").string();
  std::mt19937 rng(static_cast<std::mt19937::result_type>(epsjoin::test::test_seed()));
  constexpr std::size_t n = 300000;
  std::vector<std::uint32_t> counts(n);
  for (auto& c : counts) c = static_cast<std::uint32_t>(rng() % 41);  // ~6M ids, 24 MB
  std::vector<std::uint64_t> offsets(n + 1, 0);
  for (std::size_t q = 0; q < n; ++q) offsets[q + 1] = offsets[q] + counts[q];
  std::vector<std::uint32_t> ids(offsets.back());
  for (auto& id : ids) id = static_cast<std::uint32_t>(rng() % n);
  {
    epsjoin::csr_file_sink sink(path);
    sink.begin({n, n, true, false});
    epsjoin::detail::begin_row_blocks(sink, counts);
    // Two blocks, about 20 MB and 4 MB.
    const std::size_t cut = n * 5 / 6;
    epsjoin::detail::hand_row_block(sink, 0, {offsets.data(), cut + 1}, {ids.data(), offsets[cut]});
    epsjoin::detail::hand_row_block(sink, cut, {offsets.data() + cut, n - cut + 1},
                           {ids.data() + offsets[cut], offsets[n] - offsets[cut]});
    sink.finish();
  }
  const epsjoin::neighbor_table t = epsjoin::read_csr(path);
  EXPECT_TRUE(std::equal(t.offsets.begin(), t.offsets.end(), offsets.begin(), offsets.end()));
  EXPECT_TRUE(std::equal(t.neighbors.begin(), t.neighbors.end(), ids.begin(), ids.end()));
  std::filesystem::remove_all(dir);
}

TEST(csr_file_sink, an_unfinished_row_block_file_is_not_left_behind) {
  const auto dir = epsjoin::test::temp_dir() / "epsjoin-row-blocks-gone";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.csr").string();
  {
    epsjoin::csr_file_sink sink(path);
    sink.begin({2, 2, true, false});
    const std::vector<std::uint32_t> counts = {1, 1};
    epsjoin::detail::begin_row_blocks(sink, counts);
    // Destroyed without finish(), as when a join fails.
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

}  // namespace
