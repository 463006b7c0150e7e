// Rows laid out in processing order, moved into a CSR sink or expanded into pairs, in pieces
// that start and end anywhere (inside rows, between empty rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "core/row_copy.hpp"
#include "support/seed.hpp"

namespace {

using epsjoin::index_pair;

struct scenario {
  std::vector<std::uint64_t> offsets;  // layout over positions
  std::vector<std::uint32_t> ids;      // position -> query
  std::vector<std::uint32_t> layout;   // the neighbours, position order
  std::vector<std::uint32_t> counts;   // by query
};

scenario make_scenario(std::mt19937_64& rng, std::size_t n) {
  scenario s;
  s.ids.resize(n);
  std::iota(s.ids.begin(), s.ids.end(), 0u);
  std::shuffle(s.ids.begin(), s.ids.end(), rng);
  s.offsets.push_back(0);
  s.counts.assign(n, 0);
  for (std::size_t p = 0; p < n; ++p) {
    // Many empty rows, some long ones.
    const std::uint32_t len = rng() % 3 == 0 ? 0 : static_cast<std::uint32_t>(rng() % (rng() % 7 == 0 ? 300 : 6));
    for (std::uint32_t k = 0; k < len; ++k) s.layout.push_back(static_cast<std::uint32_t>(rng() % 1000));
    s.offsets.push_back(s.layout.size());
    s.counts[s.ids[p]] = len;
  }
  return s;
}

std::vector<index_pair> expected_pairs(const scenario& s) {
  std::vector<index_pair> pairs;
  for (std::size_t p = 0; p + 1 < s.offsets.size(); ++p) {
    for (std::uint64_t at = s.offsets[p]; at < s.offsets[p + 1]; ++at) pairs.push_back({s.ids[p], s.layout[at]});
  }
  return pairs;
}

// Random cut points over the layout, including empty pieces.
std::vector<std::uint64_t> cuts(std::mt19937_64& rng, std::uint64_t total) {
  std::vector<std::uint64_t> c = {0, total};
  for (int k = 0; k < 12 && total > 0; ++k) c.push_back(rng() % (total + 1));
  std::sort(c.begin(), c.end());
  return c;
}

TEST(copy_rows, pieces_land_in_their_rows_in_order) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  for (std::size_t n : {0u, 1u, 7u, 500u, 3000u}) {
    const scenario s = make_scenario(rng, n);
    epsjoin::csr_sink sink;
    sink.begin({n, 1000, false, false});
    const epsjoin::row_destination dest = sink.begin_rows(s.counts);
    const epsjoin::detail::row_layout layout{s.offsets, s.ids};
    const auto c = cuts(rng, s.layout.size());
    for (std::size_t k = 0; k + 1 < c.size(); ++k) {
      epsjoin::detail::copy_rows(layout, c[k],
                                 std::span<const std::uint32_t>(s.layout).subspan(c[k], c[k + 1] - c[k]),
                                 dest, 3);
    }
    sink.finish();
    const auto& t = sink.table();
    for (std::size_t p = 0; p < n; ++p) {
      const auto row = t.row(s.ids[p]);
      ASSERT_TRUE(std::equal(row.begin(), row.end(), s.layout.begin() + static_cast<std::ptrdiff_t>(s.offsets[p]),
                             s.layout.begin() + static_cast<std::ptrdiff_t>(s.offsets[p + 1])))
          << "n " << n << ", position " << p;
    }
  }
}

TEST(emit_rows_as_pairs, every_pair_once_with_its_query) {
  std::mt19937_64 rng(epsjoin::test::test_seed() + 1);
  for (std::size_t n : {0u, 1u, 7u, 500u, 3000u}) {
    const scenario s = make_scenario(rng, n);
    std::vector<index_pair> got;
    std::mutex m;
    epsjoin::callback_sink sink([&](std::span<const index_pair> batch) {
      std::lock_guard lock(m);
      got.insert(got.end(), batch.begin(), batch.end());
    });
    const epsjoin::detail::row_layout layout{s.offsets, s.ids};
    const auto c = cuts(rng, s.layout.size());
    for (std::size_t k = 0; k + 1 < c.size(); ++k) {
      epsjoin::detail::emit_rows_as_pairs(
          layout, c[k], std::span<const std::uint32_t>(s.layout).subspan(c[k], c[k + 1] - c[k]), sink, 3);
    }
    auto want = expected_pairs(s);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "n " << n;
  }
}

}  // namespace
