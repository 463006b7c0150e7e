// The device side of the table assembler (epsjoin/device_table.hpp): a device table's distances,
// sorted rows and pairs equal the host table's (brute-cpu into csr_sink) bit for bit, for tables
// filled on the device and tables uploaded from the host, on lattices with pairs at exactly eps.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "epsjoin/epsjoin.hpp"
#include "support/device_points.hpp"
#include "support/seed.hpp"

namespace {

using epsjoin::test::device_points;

/// Coordinates on a grid of 1/8: many pairs lie at exactly eps. In float64 a jitter of up to
/// 1e-3 in every third coordinate makes distances whose last bits matter; float32 points stay on
/// the grid, where every difference is exact (the GPU engines decide a float32 join in float32,
/// so near eps they may differ from the oracle: tests/support/shapes.hpp's eps_clear_of_pairs).
epsjoin::dataset points(std::size_t n, std::size_t d, std::uint64_t seed, bool f32) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n * d);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(rng() % 24) * 0.125;
    if (!f32 && i % 3 == 0) v[i] += static_cast<double>(rng() % 1000) * 1e-6;
  }
  epsjoin::dataset out(std::move(v), d);
  return f32 ? epsjoin::dataset::to_f32(out.view()) : out;
}

template <class T>
std::vector<T> download(const T* device, std::size_t n) {
  std::vector<T> host(n);
  if (n > 0) {
    EXPECT_EQ(cudaMemcpy(host.data(), device, sizeof(T) * n, cudaMemcpyDeviceToHost), cudaSuccess);
  }
  return host;
}

template <class V>
std::vector<typename V::value_type> plain(const V& v) {
  return {v.begin(), v.end()};
}

/// Bit patterns, so that equal means equal to the last bit (and -0.0 differs from 0.0).
std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> out(v.size());
  std::memcpy(out.data(), v.data(), sizeof(double) * v.size());
  return out;
}

epsjoin::neighbor_table host_table(const epsjoin::dataset& queries, const epsjoin::dataset& data,
                                   bool self, const epsjoin::join_options& options) {
  epsjoin::resources res;
  epsjoin::join_options opt = options;
  opt.engine = "brute-cpu";
  epsjoin::csr_sink sink(/*sort_neighbors=*/true, 0, /*with_distances=*/true);
  if (self) {
    epsjoin::self_join(res, data.view(), opt, sink);
  } else {
    epsjoin::join(res, queries.view(), data.view(), opt, sink);
  }
  return sink.release();
}

/// The host table's pairs as device_pairs selects them, in row order.
std::vector<std::int64_t> host_pairs(const epsjoin::neighbor_table& t,
                                     epsjoin::pair_selection which) {
  std::vector<std::int64_t> out;
  for (std::size_t q = 0; q < t.n_queries(); ++q) {
    for (const std::uint32_t j : t.row(q)) {
      const bool kept = which == epsjoin::pair_selection::every_entry ||
                        (which == epsjoin::pair_selection::neighbor_above && j > q) ||
                        (which == epsjoin::pair_selection::neighbor_not_below && j >= q);
      if (kept) out.insert(out.end(), {static_cast<std::int64_t>(q), std::int64_t{j}});
    }
  }
  return out;
}

void check_engine(const std::string& engine) {
  const std::uint64_t seed = epsjoin::test::test_seed();
  epsjoin::resources res;
  for (const bool f32 : {false, true}) {
    for (const std::size_t d : {1, 2, 5, 17}) {
      for (const std::size_t n : {0, 1, 3, 1500}) {
        const epsjoin::dataset data = points(n, d, seed + n + d, f32);
        const epsjoin::dataset queries = points(n / 2 + 1, d, seed + 7 * n + d, f32);
        const device_points data_on_device(data), queries_on_device(queries);
        for (const bool self : {true, false}) {
          for (const bool include_self : {false, true}) {
            if (!self && include_self) continue;
            SCOPED_TRACE(engine + (f32 ? " f32" : " f64") + " d=" + std::to_string(d) +
                         " n=" + std::to_string(n) + (self ? " self" : " A x B") +
                         (include_self ? " with self" : ""));
            epsjoin::join_options opt;
            opt.eps = d <= 2 ? 0.25 : 0.5;
            opt.engine = engine;
            opt.include_self = include_self;
            opt.precision = f32 ? epsjoin::scalar_type::f32 : epsjoin::scalar_type::f64;
            const epsjoin::dataset_view& q_view = self ? data_on_device.view
                                                       : queries_on_device.view;
            const epsjoin::neighbor_table want = host_table(queries, data, self, opt);
            const auto selections = self ? std::vector{epsjoin::pair_selection::every_entry,
                                                       include_self
                                                           ? epsjoin::pair_selection::neighbor_not_below
                                                           : epsjoin::pair_selection::neighbor_above}
                                         : std::vector{epsjoin::pair_selection::every_entry};
            for (const bool sort : {false, true}) {
              epsjoin::device_csr_sink sink;
              if (self) {
                epsjoin::self_join(res, data_on_device.view, opt, sink);
              } else {
                epsjoin::join(res, queries_on_device.view, data_on_device.view, opt, sink);
              }
              ASSERT_TRUE(sink.has_table());
              const epsjoin::device_csr& t = sink.table();
              ASSERT_EQ(t.n_pairs, want.n_pairs());
              epsjoin::device_array<double> distances =
                  epsjoin::device_distances(res, t, q_view, data_on_device.view);
              ASSERT_EQ(distances.size, t.n_pairs);
              if (sort) epsjoin::sort_device_rows(res, t, &distances);
              const auto offsets = download(t.offsets, t.n_queries + 1);
              auto neighbors = download(t.neighbors, t.n_pairs);
              auto values = download(distances.data, distances.size);
              EXPECT_EQ(offsets, plain(want.offsets));
              if (!sort) {
                // Unsorted rows hold the same entries: sort them here, each with its distance.
                for (std::size_t q = 0; q + 1 < offsets.size(); ++q) {
                  std::vector<std::pair<std::uint32_t, double>> row;
                  for (auto k = offsets[q]; k < offsets[q + 1]; ++k) {
                    row.emplace_back(neighbors[k], values[k]);
                  }
                  std::sort(row.begin(), row.end());
                  for (auto k = offsets[q]; k < offsets[q + 1]; ++k) {
                    neighbors[k] = row[k - offsets[q]].first;
                    values[k] = row[k - offsets[q]].second;
                  }
                }
              }
              EXPECT_EQ(neighbors, plain(want.neighbors));
              EXPECT_EQ(bits(values), bits(plain(want.distances)));
              for (const epsjoin::pair_selection which : selections) {
                const epsjoin::device_array<std::int64_t> pairs =
                    epsjoin::device_pairs(res, t, which);
                std::vector<std::int64_t> got = download(pairs.data, pairs.size);
                const std::vector<std::int64_t> expected = host_pairs(want, which);
                if (!sort) {  // rows in any order: compare as sorted pairs
                  std::vector<std::pair<std::int64_t, std::int64_t>> as_pairs;
                  for (std::size_t k = 0; k + 1 < got.size(); k += 2) {
                    as_pairs.emplace_back(got[k], got[k + 1]);
                  }
                  std::sort(as_pairs.begin(), as_pairs.end());
                  got.clear();
                  for (const auto& [i, j] : as_pairs) got.insert(got.end(), {i, j});
                }
                EXPECT_EQ(got, expected);
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

TEST(device_table, a_table_filled_on_the_device_is_finished_as_the_host_table) {
  check_engine("lbjoin");
}

TEST(device_table, a_table_uploaded_from_the_host_is_finished_as_the_host_table) {
  check_engine("gpu-sj");
}

TEST(device_table, refusals_are_clear) {
  const epsjoin::dataset data = points(500, 2, epsjoin::test::test_seed(), false);
  const device_points on_device(data);
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = 0.25;
  epsjoin::device_csr_sink sink;
  epsjoin::self_join(res, on_device.view, opt, sink);
  const epsjoin::device_csr& t = sink.table();
  ASSERT_GT(t.n_pairs, 0u);
  // Host points are not the table's.
  EXPECT_THROW(epsjoin::device_distances(res, t, data.view(), data.view()),
               epsjoin::invalid_argument);
  // Points of another count than the rows.
  epsjoin::dataset_view fewer = on_device.view;
  fewer.n = 10;
  EXPECT_THROW(epsjoin::device_distances(res, t, fewer, on_device.view),
               epsjoin::invalid_argument);
  // Distances of another table.
  epsjoin::device_array<double> short_distances = epsjoin::device_distances(res, t, on_device.view,
                                                                            on_device.view);
  short_distances.size -= 1;
  EXPECT_THROW(epsjoin::sort_device_rows(res, t, &short_distances), epsjoin::invalid_argument);
  // A device budget without room beside the table refuses before it allocates.
  res.set_memory({0, 1});
  EXPECT_THROW(epsjoin::device_distances(res, t, on_device.view, on_device.view),
               epsjoin::out_of_memory);
  EXPECT_THROW(epsjoin::sort_device_rows(res, t), epsjoin::out_of_memory);
  EXPECT_THROW(epsjoin::device_pairs(res, t, epsjoin::pair_selection::neighbor_above),
               epsjoin::out_of_memory);
}
