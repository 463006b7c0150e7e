// The CPU engines' row-wise delivery against the oracle: a CSR table in memory and in a file,
// and pair files, over thread counts, with and without self pairs, self-joins and A x B, ties
// at exactly eps (lattices), duplicates, N = 0 and 1, and a memory limit small enough that
// every planner recomputes instead of storing. cpu-grid's self-join fills each pair's two rows
// from one computation (fill=halved): a pair written to only one of its rows fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/seed.hpp"
#include "support/shapes.hpp"
#include "support/temp_dir.hpp"

namespace epsjoin::test {
namespace {

using pairs = std::vector<index_pair>;

struct rows_engine {
  std::string name;
  std::map<std::string, std::string> params = {};
  scalar_type precision = scalar_type::f64;
};

const std::vector<rows_engine>& engines() {
  static const std::vector<rows_engine> all = {
      {"cpu-grid"},
      {"cpu-grid", {}, scalar_type::f32},
      {"cpu-grid", {{"pattern", "unicomp"}, {"gather", "1"}}},
      {"cpu-grid", {{"layout", "rows"}}, scalar_type::f32},
      {"cpu-grid", {{"fill", "full"}}},
      {"cpu-grid", {{"fill", "halved"}, {"pattern", "unicomp"}}, scalar_type::f32},
      {"super-ego"},
      {"cpu-rtree"},
  };
  return all;
}

std::string label(const rows_engine& e) {
  std::string s = e.name;
  for (const auto& [k, v] : e.params) s += " " + k + "=" + v;
  return s + (e.precision == scalar_type::f32 ? " f32" : " f64");
}

struct join_case {
  shape_kind kind;
  std::size_t n;
  std::size_t d;
  bool self = true;
};

// Lattices at eps = their spacing put pairs at exactly eps; duplicates put many at distance 0.
std::vector<join_case> cases() {
  return {{shape_kind::lattice, 900, 2},  {shape_kind::lattice, 400, 3},
          {shape_kind::duplicates, 600, 2}, {shape_kind::uniform, 1500, 2},
          {shape_kind::clusters, 800, 4}, {shape_kind::skewed, 1000, 1},
          {shape_kind::uniform, 0, 2},    {shape_kind::uniform, 1, 3},
          {shape_kind::uniform, 2, 2},    {shape_kind::lattice, 500, 2, false}};
}

double eps_of(const join_case& c, const dataset& points) {
  if (c.kind == shape_kind::lattice) return 0.25;  // the lattice's spacing
  if (points.n() < 2) return 0.1;
  return eps_for_selectivity(points.view(), points.view(), 12);
}

join_options options_of(const rows_engine& e, double eps, bool include_self) {
  join_options opt;
  opt.eps = eps;
  opt.engine = e.name;
  opt.params = e.params;
  opt.precision = e.precision;
  opt.include_self = include_self;
  return opt;
}

resources resources_of(unsigned threads, std::uint64_t host_limit) {
  resources res(threads);
  memory_limits limits;
  limits.host_bytes = host_limit;
  res.set_memory(limits);
  return res;
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

pairs rows_of(const neighbor_table& t) {
  pairs out;
  for (std::uint32_t q = 0; q < t.n_queries(); ++q) {
    for (std::uint32_t nb : t.row(q)) out.push_back({q, nb});
  }
  return out;
}

class cpu_rows : public testing::TestWithParam<std::size_t> {};

TEST_P(cpu_rows, csr_and_pair_files_match_the_oracle) {
  const rows_engine& e = engines()[GetParam()];
  std::uint64_t seed = test_seed();
  for (const join_case& c : cases()) {
    const dataset a = make_shape(c.kind, c.n, c.d, seed++);
    const dataset b = c.self ? dataset{} : make_shape(c.kind, c.n / 2 + 3, c.d, seed++);
    const dataset_view data = c.self ? a.view() : b.view();
    const double eps = eps_of(c, a);
    const pairs oracle = run_collect({"brute-cpu"}, a.view(), data, c.self, eps);
    for (const bool with_self : {false, true}) {
      pairs expected = oracle;
      if (c.self && with_self) {
        for (std::uint32_t q = 0; q < a.n(); ++q) expected.push_back({q, q});
        std::sort(expected.begin(), expected.end());
      }
      const join_options opt = options_of(e, eps, with_self);
      std::vector<char> unlimited_file;
      for (const unsigned threads : {1u, 2u, 3u, 7u}) {
        for (const std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{1} << 20}) {
          SCOPED_TRACE(label(e) + ", " + to_string(c.kind) + " n " + std::to_string(c.n) +
                       " d " + std::to_string(c.d) + (c.self ? " self" : " AxB") +
                       (with_self ? " include_self" : "") + ", threads " +
                       std::to_string(threads) + ", host limit " + std::to_string(limit) +
                       ", seed " + std::to_string(test_seed()));
          resources res = resources_of(threads, limit);
          csr_sink table(true);
          const join_stats s = c.self ? self_join(res, a.view(), opt, table)
                                      : join(res, a.view(), data, opt, table);
          ASSERT_EQ(table.table().n_queries(), a.n());
          // Sorted rows equal to the sorted oracle: every pair in both of its rows, once.
          EXPECT_TRUE(rows_of(table.table()) == expected)
              << rows_of(table.table()).size() << " entries, expected " << expected.size();
          EXPECT_EQ(s.pairs + s.self_pairs, expected.size());

          const std::string csr_path = temp_path("t.csr");
          {
            csr_file_sink file(csr_path, true);
            if (c.self) {
              self_join(res, a.view(), opt, file);
            } else {
              join(res, a.view(), data, opt, file);
            }
          }
          EXPECT_TRUE(rows_of(read_csr(csr_path)) == expected);
          // Sorted rows make the file one byte sequence whatever the threads and the limit.
          if (unlimited_file.empty()) unlimited_file = file_bytes(csr_path);
          EXPECT_TRUE(file_bytes(csr_path) == unlimited_file) << "the CSR file differs";
          std::remove(csr_path.c_str());

          // Pair files: every ordered pair, and each unordered pair once (i < j, and (i, i)
          // with self pairs) as a self-join's default.
          for (const bool ordered : {true, false}) {
            const std::string npy_path = temp_path("p.npy");
            {
              pair_file_sink file(npy_path, pair_file_format::npy, ordered);
              if (c.self) {
                self_join(res, a.view(), opt, file);
              } else {
                join(res, a.view(), data, opt, file);
              }
            }
            const std::vector<char> npy = file_bytes(npy_path);
            std::remove(npy_path.c_str());
            ASSERT_GE(npy.size(), 10u);
            // Version 1.0: magic, version, a little-endian 16-bit header length, the header.
            const std::size_t body = 10 + static_cast<unsigned char>(npy[8]) +
                                     256 * static_cast<unsigned char>(npy[9]);
            pairs written((npy.size() - body) / sizeof(index_pair));
            // An empty vector's data() may be null, which memcpy may not take even for 0 bytes.
            if (!written.empty()) {
              std::memcpy(written.data(), npy.data() + body, written.size() * sizeof(index_pair));
            }
            std::sort(written.begin(), written.end());
            pairs want;
            for (const index_pair& p : expected) {
              if (ordered || !c.self || p.query <= p.neighbor) want.push_back(p);
            }
            EXPECT_TRUE(written == want) << written.size() << " pairs in the .npy ("
                                         << (ordered ? "ordered" : "unique") << "), expected "
                                         << want.size();
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(engines, cpu_rows, testing::Range<std::size_t>(0, 8),
                         [](const testing::TestParamInfo<std::size_t>& param) {
                           std::string s = label(engines()[param.param]);
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

}  // namespace
}  // namespace epsjoin::test
