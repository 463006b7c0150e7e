// Each CPU engine's unique pairs against the oracle: in memory (unique_pairs_sink), as .npy and
// as CSV, over thread counts and memory limits, with and without self pairs, self-joins and
// A x B, ties at exactly eps (lattices), duplicates, N = 0, 1 and 2. A self-join whose pattern
// finds each pair once (cpu-grid's halved patterns, super-ego) hands each unordered pair over
// once, as unordered rows; a sink that records what arrives checks that it did, and
// that nothing arrived twice. The statistics still count ordered pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"
#include "support/temp_dir.hpp"

namespace epsjoin::test {
namespace {

using pairs = std::vector<index_pair>;

struct pairs_engine {
  std::string name;
  std::map<std::string, std::string> params = {};
  scalar_type precision = scalar_type::f64;
  bool once = false;  // a self-join finds each pair once, so it hands each over once
  distance_metric metric = distance_metric::euclidean;
};

const std::vector<pairs_engine>& engines() {
  static const std::vector<pairs_engine> all = {
      {"cpu-grid", {}, scalar_type::f64, true},
      {"cpu-grid", {}, scalar_type::f32, true},
      {"cpu-grid", {{"pattern", "unicomp"}, {"gather", "1"}}, scalar_type::f64, true},
      {"cpu-grid", {{"layout", "rows"}}, scalar_type::f32, true},
      {"cpu-grid", {{"pattern", "full"}}, scalar_type::f64, false},
      {"cpu-grid", {}, scalar_type::f64, true, distance_metric::manhattan},
      {"super-ego", {}, scalar_type::f64, true},
      {"cpu-rtree", {}, scalar_type::f64, false},
  };
  return all;
}

std::string label(const pairs_engine& e) {
  std::string s = e.name;
  for (const auto& [k, v] : e.params) s += " " + k + "=" + v;
  if (e.metric != distance_metric::euclidean) s += " " + std::string(to_string(e.metric));
  return s + (e.precision == scalar_type::f32 ? " f32" : " f64");
}

struct join_case {
  shape_kind kind;
  std::size_t n;
  std::size_t d;
  bool self = true;
};

std::vector<join_case> cases() {
  return {{shape_kind::lattice, 900, 2},    {shape_kind::lattice, 343, 3},
          {shape_kind::duplicates, 600, 2}, {shape_kind::uniform, 2000, 2},
          {shape_kind::clusters, 800, 5},   {shape_kind::skewed, 1000, 1},
          {shape_kind::uniform, 0, 2},      {shape_kind::uniform, 1, 3},
          {shape_kind::duplicates, 2, 2},   {shape_kind::lattice, 500, 2, false},
          {shape_kind::duplicates, 300, 3, false}};
}

double eps_of(const join_case& c, const dataset& points) {
  if (c.kind == shape_kind::lattice) return 0.25;  // the lattice's spacing: pairs at exactly eps
  if (points.n() < 2) return 0.1;
  return eps_for_selectivity(points.view(), points.view(), 12);
}

// Records what arrives and how: ordered pairs kept as a unique-pairs sink keeps them, and
// unordered pairs, which must each be (min, max).
// With `rows`, it takes rows too (as Python's pairs sink does): an engine that finds each pair
// once still hands pairs over once, the others fill rows, kept here as their upper half.
class recording_sink final : public result_sink {
 public:
  explicit recording_sink(bool rows = false) : rows_(rows) {}
  void begin(const sink_info& info) override {
    keep_all_ = !info.self_join;
    table_.begin(info);
  }
  sink_request request() const override {
    return {.form = result_form::unique_pairs, .rows_in_place = rows_};
  }
  row_destination consume_counts(const count_batch& counts) override {
    rows_delivered = true;
    return table_.consume_counts(counts);
  }
  void finish() override {
    if (!rows_delivered) return;
    table_.finish();
    const neighbor_table& t = table_.table();
    for (std::uint32_t q = 0; q < t.n_queries(); ++q) {
      for (const std::uint32_t nb : t.row(q)) consume(std::span<const index_pair>({index_pair{q, nb}}));
    }
  }
  void consume(std::span<const index_pair> batch) override {
    std::lock_guard lock(mutex_);
    for (const index_pair& p : batch) {
      if (keep_all_ || p.query <= p.neighbor) kept.push_back(p);
      if (p.query != p.neighbor) ++ordered_non_self;
    }
  }
  void consume_rows(const row_segment& rows) override {
    ASSERT_TRUE(rows.unordered && rows.offsets.empty());
    std::lock_guard lock(mutex_);
    for (std::size_t k = 0; k < rows.queries.size(); ++k) {
      if (!(rows.queries[k] < rows.neighbors[k])) ++not_min_max;
      kept.push_back({rows.queries[k], rows.neighbors[k]});
    }
    unordered += rows.queries.size();
  }
  pairs kept;
  std::uint64_t ordered_non_self = 0, unordered = 0, not_min_max = 0;
  bool rows_delivered = false;

 private:
  bool rows_;
  csr_sink table_;
  bool keep_all_ = false;
  std::mutex mutex_;
};

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

pairs npy_pairs(const std::vector<char>& npy) {
  if (npy.size() < 10) return {{~0u, ~0u}};  // no file: a pair no join gives
  // Version 1.0: magic, version, a little-endian 16-bit header length, the header.
  const std::size_t body =
      10 + static_cast<unsigned char>(npy[8]) + 256 * static_cast<unsigned char>(npy[9]);
  pairs out((npy.size() - body) / sizeof(index_pair));
  // An empty vector's data() may be null, which memcpy may not take even for 0 bytes.
  if (!out.empty()) std::memcpy(out.data(), npy.data() + body, out.size() * sizeof(index_pair));
  return out;
}

pairs csv_pairs(const std::vector<char>& csv) {
  pairs out;
  std::istringstream in(std::string(csv.begin(), csv.end()));
  std::uint32_t q = 0, n = 0;
  char comma = 0;
  while (in >> q >> comma >> n) out.push_back({q, n});
  return out;
}

pairs sorted(pairs p) {
  std::sort(p.begin(), p.end());
  return p;
}

class cpu_unique_pairs : public testing::TestWithParam<std::size_t> {};

TEST_P(cpu_unique_pairs, match_the_oracle_in_memory_npy_and_csv) {
  const pairs_engine& e = engines()[GetParam()];
  std::uint64_t seed = test_seed();
  for (const join_case& c : cases()) {
    const dataset a = make_shape(c.kind, c.n, c.d, seed++);
    const dataset b = c.self ? dataset{} : make_shape(c.kind, c.n / 2 + 3, c.d, seed++);
    const dataset_view data = c.self ? a.view() : b.view();
    const double eps = eps_of(c, a);
    join_options opt;
    opt.eps = eps;
    opt.engine = e.name;
    opt.params = e.params;
    opt.precision = e.precision;
    opt.metric = e.metric;
    // The oracle in the engine's metric: brute-cpu computes every metric exactly.
    join_options oracle_opt = opt;
    oracle_opt.engine = "brute-cpu";
    oracle_opt.params = {};
    oracle_opt.precision = scalar_type::f64;
    pairs ordered;
    {
      resources res(1);
      callback_sink collect([&](std::span<const index_pair> batch) {
        ordered.insert(ordered.end(), batch.begin(), batch.end());
      });
      if (c.self) {
        self_join(res, a.view(), oracle_opt, collect);
      } else {
        join(res, a.view(), data, oracle_opt, collect);
      }
    }
    for (const bool with_self : {false, true}) {
      opt.include_self = with_self;
      pairs want;
      for (const index_pair& p : ordered) {
        if (!c.self || p.query < p.neighbor) want.push_back(p);
      }
      if (c.self && with_self) {
        for (std::uint32_t q = 0; q < a.n(); ++q) want.push_back({q, q});
      }
      want = sorted(want);
      for (const unsigned threads : {1u, 2u, 3u, 7u}) {
        for (const std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{1} << 20}) {
          SCOPED_TRACE(label(e) + ", " + to_string(c.kind) + " n " + std::to_string(c.n) +
                       " d " + std::to_string(c.d) + (c.self ? " self" : " AxB") +
                       (with_self ? " include_self" : "") + ", threads " +
                       std::to_string(threads) + ", host limit " + std::to_string(limit) +
                       ", seed " + std::to_string(test_seed()));
          resources res(threads);
          res.set_memory({limit, 0});
          auto run = [&](result_sink& sink) {
            return c.self ? self_join(res, a.view(), opt, sink) : join(res, a.view(), data, opt, sink);
          };

          unique_pairs_sink memory;
          const join_stats s = run(memory);
          EXPECT_TRUE(memory.pairs() == want)
              << memory.pairs().size() << " pairs in memory, expected " << want.size();
          // Ordered pairs, as ever, whichever way they were handed over.
          EXPECT_EQ(s.pairs, ordered.size());
          EXPECT_EQ(s.self_pairs, c.self && with_self ? a.n() : 0u);

          for (const bool rows : {false, true}) {
            recording_sink recorded(rows);
            run(recorded);
            EXPECT_TRUE(sorted(recorded.kept) == want)
                << recorded.kept.size() << " recorded" << (rows ? " (rows taken)" : "");
            EXPECT_EQ(recorded.not_min_max, 0u);
            if (c.self && e.once) {
              EXPECT_EQ(recorded.ordered_non_self, 0u) << "a pair found once went both ways";
              EXPECT_EQ(recorded.unordered, ordered.size() / 2);
              EXPECT_FALSE(recorded.rows_delivered);
            } else {
              EXPECT_EQ(recorded.unordered, 0u);
              // cpu-rtree hands pairs to every sink; the grid and super-ego fill rows.
              if (e.name != "cpu-rtree") {
                EXPECT_EQ(recorded.rows_delivered, rows && c.n > 0);
              }
            }
          }

          for (const pair_file_format format : {pair_file_format::npy, pair_file_format::csv}) {
            const bool npy = format == pair_file_format::npy;
            const std::string path = temp_path(npy ? "p.npy" : "p.csv");
            {
              pair_file_sink file(path, format);
              run(file);
              EXPECT_EQ(file.written(), want.size());
            }
            const std::vector<char> bytes = file_bytes(path);
            std::remove(path.c_str());
            const pairs written = npy ? npy_pairs(bytes) : csv_pairs(bytes);
            EXPECT_TRUE(sorted(written) == want)
                << written.size() << " pairs in the " << (npy ? ".npy" : "CSV") << ", expected "
                << want.size();
            if (threads == 1) {
              // One thread hands pairs over in one order: the same file every time.
              {
                pair_file_sink again(path, format);
                run(again);
              }
              EXPECT_TRUE(file_bytes(path) == bytes) << "a one-thread pair file differs";
              std::remove(path.c_str());
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(engines, cpu_unique_pairs,
                         testing::Range<std::size_t>(0, engines().size()),
                         [](const testing::TestParamInfo<std::size_t>& param) {
                           std::string s = label(engines()[param.param]);
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

}  // namespace
}  // namespace epsjoin::test
