// The GPU engines' query-order fast path into row-block sinks (a callback, a CSR file): the
// blocks' order, rows longer than a pinned chunk, self pairs added to each block, A x B joins,
// against the oracle's table; and the same path into a table in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "epsjoin/epsjoin.hpp"
#include "epsjoin/io.hpp"
#include "support/seed.hpp"
#include "support/temp_dir.hpp"

namespace {

epsjoin::dataset lattice(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n * d);
  for (double& x : v) x = static_cast<double>(rng() % 24) * 0.125;  // exact: ties at eps
  return epsjoin::dataset(std::move(v), d);
}

void run(const std::string& engine, const std::map<std::string, std::string>& params,
                            const epsjoin::dataset& data, const epsjoin::dataset* queries, double eps,
                            bool include_self, epsjoin::result_sink& sink) {
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = eps;
  opt.engine = engine;
  opt.params = params;
  opt.include_self = include_self;
  if (queries == nullptr) {
    epsjoin::self_join(res, data.view(), opt, sink);
  } else {
    epsjoin::join(res, queries->view(), data.view(), opt, sink);
  }
}

epsjoin::neighbor_table oracle(const epsjoin::dataset& data, const epsjoin::dataset* queries,
                               double eps, bool include_self) {
  epsjoin::csr_sink sink(true);
  run("brute-cpu", {}, data, queries, eps, include_self, sink);
  return sink.release();
}

struct case_ {
  const char* engine;
  std::map<std::string, std::string> params;
};

// chunk_ids=7 makes most rows longer than a pinned chunk: they are gathered across chunks.
const std::vector<case_> cases = {
    {"lbjoin", {}},
    {"lbjoin", {{"chunk_ids", "7"}}},
    {"lbjoin", {{"chunk_ids", "1000"}, {"fill", "records"}}},
    {"gds-join", {{"chunk_ids", "333"}}},
    {"meta-16q", {}},
};

TEST(gpu_row_blocks, callback_blocks_rebuild_the_oracle_table) {
  const auto data = lattice(3000, 3, epsjoin::test::test_seed());
  const auto queries = lattice(900, 3, epsjoin::test::test_seed() + 1);
  for (const bool cross : {false, true}) {
    const epsjoin::dataset* q = cross ? &queries : nullptr;
    for (const bool include_self : {false, true}) {
      if (cross && include_self) continue;
      const epsjoin::neighbor_table expected = oracle(data, q, 0.25, include_self);
      for (const case_& c : cases) {
        epsjoin::neighbor_table got;
        got.offsets.assign(1, 0);
        std::size_t blocks = 0;
        epsjoin::row_block_sink sink(
            [&](std::size_t first, std::span<const std::uint64_t> offsets,
                std::span<const std::uint32_t> ids) {
              ASSERT_EQ(first + 1, got.offsets.size());
              ASSERT_EQ(offsets.front(), got.offsets.back());
              got.offsets.insert(got.offsets.end(), offsets.begin() + 1, offsets.end());
              got.neighbors.insert(got.neighbors.end(), ids.begin(), ids.end());
              ++blocks;
            },
            true);
        run(c.engine, c.params, data, q, 0.25, include_self, sink);
        const std::string what = std::string(c.engine) + (c.params.empty() ? "" : " with params") +
                                 (cross ? " A x B" : " self") + (include_self ? " +self" : "");
        EXPECT_EQ(got.offsets, expected.offsets) << what;
        EXPECT_TRUE(got.neighbors == expected.neighbors) << what;
        if (c.params.count("chunk_ids") != 0 && expected.n_pairs() > 20000) {
          EXPECT_GT(blocks, 1u) << what;
        }
      }
    }
  }
}

TEST(gpu_row_blocks, csr_files_and_tables_in_memory_match_the_oracle) {
  const auto data = lattice(4000, 2, epsjoin::test::test_seed() + 7);
  const auto dir = epsjoin::test::temp_dir() / "epsjoin-gpu-row-blocks";
  std::filesystem::create_directories(dir);
  for (const bool include_self : {false, true}) {
    const epsjoin::neighbor_table expected = oracle(data, nullptr, 0.25, include_self);
    for (const case_& c : cases) {
      const std::string path = (dir / "t.csr").string();
      {
        epsjoin::csr_file_sink file(path, true);
        run(c.engine, c.params, data, nullptr, 0.25, include_self, file);
      }
      const epsjoin::neighbor_table from_file = epsjoin::read_csr(path);
      EXPECT_EQ(from_file.offsets, expected.offsets) << c.engine << " file";
      EXPECT_TRUE(from_file.neighbors == expected.neighbors) << c.engine << " file";
      std::filesystem::remove(path);
      epsjoin::csr_sink table(true);
      run(c.engine, c.params, data, nullptr, 0.25, include_self, table);
      EXPECT_EQ(table.table().offsets, expected.offsets) << c.engine << " memory";
      EXPECT_TRUE(table.table().neighbors == expected.neighbors) << c.engine << " memory";
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "a temporary file was left behind";
  std::filesystem::remove_all(dir);
}

// Lays its rows out last query first, so no run of a query-order table is a run of its table:
// the engines must place the rows (and, with self pairs, the slot before each) one by one.
class reversed_rows_sink final : public epsjoin::result_sink {
 public:
  epsjoin::sink_request request() const override {
    return {.form = epsjoin::result_form::table, .rows_in_place = true};
  }
  epsjoin::row_destination consume_counts(const epsjoin::count_batch& batch) override {
    const std::span<const std::uint32_t> counts = batch.counts;
    counts_.assign(counts.begin(), counts.end());
    starts_.assign(counts.size(), 0);
    std::uint64_t at = 0;
    for (std::size_t q = counts.size(); q-- > 0;) {
      starts_[q] = at;
      at += counts[q];
    }
    ids_.assign(at, 0);
    return {ids_.data(), starts_.data()};
  }
  void consume(std::span<const epsjoin::index_pair>) override {
    FAIL() << "rows were expected, not pairs";
  }
  /// The rows in query order, each sorted.
  epsjoin::neighbor_table table() const {
    epsjoin::neighbor_table t;
    t.offsets.assign(1, 0);
    for (std::size_t q = 0; q < counts_.size(); ++q) {
      std::vector<std::uint32_t> row(ids_.begin() + static_cast<std::ptrdiff_t>(starts_[q]),
                                     ids_.begin() + static_cast<std::ptrdiff_t>(starts_[q] + counts_[q]));
      std::sort(row.begin(), row.end());
      t.neighbors.insert(t.neighbors.end(), row.begin(), row.end());
      t.offsets.push_back(t.neighbors.size());
    }
    return t;
  }

 private:
  std::vector<std::uint32_t> counts_;
  std::vector<std::uint64_t> starts_;
  std::vector<std::uint32_t> ids_;
};

TEST(gpu_row_blocks, rows_placed_one_by_one_into_a_sink_of_another_layout) {
  const auto data = lattice(3000, 2, epsjoin::test::test_seed() + 11);
  for (const bool include_self : {false, true}) {
    const epsjoin::neighbor_table expected = oracle(data, nullptr, 0.25, include_self);
    for (const case_& c : cases) {
      reversed_rows_sink sink;
      run(c.engine, c.params, data, nullptr, 0.25, include_self, sink);
      const epsjoin::neighbor_table got = sink.table();
      const std::string what = std::string(c.engine) + (c.params.empty() ? "" : " with params") +
                               (include_self ? " +self" : "");
      EXPECT_EQ(got.offsets, expected.offsets) << what;
      EXPECT_TRUE(got.neighbors == expected.neighbors) << what;
    }
  }
}

}  // namespace
