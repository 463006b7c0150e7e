// Rows laid out in processing order, moved into a CSR sink or expanded into pairs, in pieces
// that start and end anywhere (inside rows, between empty rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "results/handover.hpp"
#include "results/row_copy.hpp"
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
    const epsjoin::row_destination dest = epsjoin::detail::lay_out_rows(sink, s.counts);
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

namespace {

// A query-order layout of random rows; its destination either the same layout or one with a
// gap of `gap` ids before each row (what a sink that adds self pairs hands out).
struct query_rows_case {
  std::vector<std::uint64_t> offsets;  // the layout, query order
  std::vector<std::uint32_t> layout;
  std::vector<std::uint64_t> starts;   // the destination's
  std::vector<std::uint32_t> table;
};

query_rows_case make_query_rows(std::mt19937_64& rng, std::size_t n, std::uint32_t gap) {
  query_rows_case c;
  c.offsets.push_back(0);
  for (std::size_t q = 0; q < n; ++q) {
    const std::uint32_t len = rng() % 3 == 0 ? 0 : static_cast<std::uint32_t>(rng() % (rng() % 7 == 0 ? 300 : 6));
    c.starts.push_back(c.layout.size() + q * gap + gap);
    for (std::uint32_t k = 0; k < len; ++k) c.layout.push_back(static_cast<std::uint32_t>(rng()));
    c.offsets.push_back(c.layout.size());
  }
  c.starts.push_back(c.layout.size() + n * gap);
  if (gap == 0) c.starts = c.offsets;
  c.table.assign(c.layout.size() + n * gap, 0xdeadbeefu);
  return c;
}

}  // namespace

TEST(copy_query_rows, pieces_land_in_their_rows_with_and_without_gaps) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  for (std::uint32_t gap : {0u, 1u}) {
    for (std::size_t n : {0u, 1u, 7u, 500u, 3000u}) {
      query_rows_case c = make_query_rows(rng, n, gap);
      const epsjoin::row_destination dest{c.table.data(), c.starts.data()};
      const bool contiguous = epsjoin::detail::is_contiguous(c.offsets, dest, 3);
      EXPECT_EQ(contiguous, gap == 0 || n == 0) << "n " << n << " gap " << gap;
      const std::vector<std::uint64_t> at = cuts(rng, c.layout.size());
      for (std::size_t k = 0; k + 1 < at.size(); ++k) {
        const std::span<const std::uint32_t> piece(c.layout.data() + at[k], at[k + 1] - at[k]);
        epsjoin::detail::copy_query_rows(c.offsets, at[k], piece, dest, contiguous, 3);
      }
      for (std::size_t q = 0; q < n; ++q) {
        for (std::uint64_t i = c.offsets[q]; i < c.offsets[q + 1]; ++i) {
          ASSERT_EQ(c.table[c.starts[q] + (i - c.offsets[q])], c.layout[i])
              << "n " << n << " row " << q;
        }
        // The gap before each row is left alone.
        // Braced: ASSERT_EQ expands to an if-else, which an unbraced if would dangle over.
        if (gap > 0) {
          ASSERT_EQ(c.table[c.starts[q] - 1], 0xdeadbeefu) << "n " << n << " row " << q;
        }
      }
    }
  }
}

TEST(copy_query_rows, a_destination_that_differs_in_one_row_is_not_contiguous) {
  std::vector<std::uint64_t> offsets(1 << 20);
  std::iota(offsets.begin(), offsets.end(), 0u);
  std::vector<std::uint64_t> starts = offsets;
  std::vector<std::uint32_t> table(offsets.size());
  EXPECT_TRUE(epsjoin::detail::is_contiguous(offsets, {table.data(), starts.data()}, 4));
  starts[starts.size() / 2 + 123] += 1;
  EXPECT_FALSE(epsjoin::detail::is_contiguous(offsets, {table.data(), starts.data()}, 4));
}

// A sink that adds self pairs hands out rows with one slot before each (dispatch's counting sink:
// its table's rows start at offsets[q] + q, and it returns the neighbours one id further on). The
// layout with those slots filled is then copied in runs cut anywhere.
TEST(copy_run, a_layout_with_self_slots_lands_in_a_sink_that_adds_self_pairs) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  for (std::size_t n : {0u, 1u, 9u, 2000u}) {
    query_rows_case c = make_query_rows(rng, n, 0);
    std::vector<std::uint64_t> inner_starts(n + 1);
    for (std::size_t q = 0; q <= n; ++q) inner_starts[q] = c.offsets[q] + q;
    std::vector<std::uint32_t> table(c.layout.size() + n + 1, 0xdeadbeefu);
    const epsjoin::row_destination dest{table.data() + 1, inner_starts.data()};
    EXPECT_TRUE(epsjoin::detail::is_contiguous(c.offsets, dest, 3, 1)) << "n " << n;
    EXPECT_EQ(epsjoin::detail::is_contiguous(c.offsets, dest, 3, 0), n <= 1) << "n " << n;
    std::vector<std::uint32_t> run;
    for (std::size_t q = 0; q < n; ++q) {
      run.push_back(static_cast<std::uint32_t>(q));
      run.insert(run.end(), c.layout.begin() + static_cast<std::ptrdiff_t>(c.offsets[q]),
                 c.layout.begin() + static_cast<std::ptrdiff_t>(c.offsets[q + 1]));
    }
    const std::vector<std::uint64_t> at = cuts(rng, run.size());
    for (std::size_t k = 0; k + 1 < at.size(); ++k) {
      epsjoin::detail::copy_run(dest.neighbors - 1, at[k], {run.data() + at[k], at[k + 1] - at[k]}, 3);
    }
    for (std::size_t q = 0; q < n; ++q) {
      // The slot before the row; dest.neighbors is table.data() + 1.
      ASSERT_EQ(table[dest.starts[q]], q) << "the self slot of row " << q;
      for (std::uint64_t i = c.offsets[q]; i < c.offsets[q + 1]; ++i) {
        ASSERT_EQ(dest.neighbors[dest.starts[q] + (i - c.offsets[q])], c.layout[i]) << "row " << q;
      }
    }
  }
}

// A destination in two arrays (a device of a multi-device join: its own rows in the caller's
// table, its halo's beside it): every writer lands each row in its own array, and a run copy is
// never offered.
TEST(copy_rows, a_destination_in_two_arrays_gets_each_row_in_its_array) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  for (std::size_t n : {1u, 7u, 500u, 3000u}) {
    const scenario s = make_scenario(rng, n);
    const std::size_t second_from = n / 3;
    std::vector<std::uint64_t> starts(n);
    std::uint64_t first_size = 0, second_size = 0;
    for (std::size_t q = 0; q < n; ++q) {
      std::uint64_t& size = q < second_from ? first_size : second_size;
      starts[q] = size;
      size += s.counts[q];
    }
    std::vector<std::uint32_t> first(first_size, 0xdeadbeefu), second(second_size, 0xdeadbeefu);
    const epsjoin::row_destination dest{first.data(), starts.data(), second.data(), second_from};
    const std::vector<std::uint64_t> at = cuts(rng, s.layout.size());
    for (std::size_t k = 0; k + 1 < at.size(); ++k) {
      epsjoin::detail::copy_rows({s.offsets, s.ids}, at[k],
                                 {s.layout.data() + at[k], at[k + 1] - at[k]}, dest, 3);
    }
    for (std::size_t p = 0; p < n; ++p) {
      const std::uint32_t q = s.ids[p];
      const std::uint32_t* row = (q < second_from ? first.data() : second.data()) + starts[q];
      ASSERT_EQ(row, dest.row(q));
      for (std::uint64_t i = s.offsets[p]; i < s.offsets[p + 1]; ++i) {
        ASSERT_EQ(row[i - s.offsets[p]], s.layout[i]) << "n " << n << " query " << q;
      }
    }
    // The same rows in query order, copied row by row: a run copy would write past `first`.
    std::vector<std::uint64_t> query_offsets(n + 1, 0);
    for (std::size_t q = 0; q < n; ++q) query_offsets[q + 1] = query_offsets[q] + s.counts[q];
    std::vector<std::uint32_t> by_query(query_offsets[n]);
    for (std::size_t p = 0; p < n; ++p) {
      std::copy(s.layout.begin() + static_cast<std::ptrdiff_t>(s.offsets[p]),
                s.layout.begin() + static_cast<std::ptrdiff_t>(s.offsets[p + 1]),
                by_query.begin() + static_cast<std::ptrdiff_t>(query_offsets[s.ids[p]]));
    }
    std::fill(first.begin(), first.end(), 0xdeadbeefu);
    std::fill(second.begin(), second.end(), 0xdeadbeefu);
    const bool contiguous = epsjoin::detail::is_contiguous(query_offsets, dest, 3);
    EXPECT_FALSE(contiguous) << "n " << n;
    const std::vector<std::uint64_t> query_cuts = cuts(rng, by_query.size());
    for (std::size_t k = 0; k + 1 < query_cuts.size(); ++k) {
      epsjoin::detail::copy_query_rows(
          query_offsets, query_cuts[k],
          {by_query.data() + query_cuts[k], query_cuts[k + 1] - query_cuts[k]}, dest, contiguous, 3);
    }
    for (std::size_t q = 0; q < n; ++q) {
      for (std::uint64_t i = query_offsets[q]; i < query_offsets[q + 1]; ++i) {
        ASSERT_EQ(dest.row(q)[i - query_offsets[q]], by_query[i]) << "n " << n << " query " << q;
      }
    }
  }
}
