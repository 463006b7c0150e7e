// Points already in device memory (dataset_view with memory_space::device) and tables left there
// (device_csr_sink): every GPU engine against the oracle, with no host-to-device copy of the
// points (join_stats::h2d_point_bytes == 0), and none of the table for the row-filling engines.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "epsjoin/epsjoin.hpp"
#include "support/device_points.hpp"
#include "support/seed.hpp"

namespace {

using epsjoin::test::device_points;

/// Coordinates on a grid of 1/8 (exact in float32 too): many pairs lie at exactly eps.
epsjoin::dataset lattice(std::size_t n, std::size_t d, std::uint64_t seed, bool f32 = false) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(n * d);
  for (double& x : v) x = static_cast<double>(rng() % 24) * 0.125;
  epsjoin::dataset out(std::move(v), d);
  return f32 ? epsjoin::dataset::to_f32(out.view()) : out;
}

/// A device table on the host, each row sorted.
epsjoin::neighbor_table download(const epsjoin::device_csr& t) {
  epsjoin::neighbor_table h;
  h.offsets.resize(t.n_queries + 1);
  h.neighbors.resize(t.n_pairs);
  EXPECT_EQ(cudaMemcpy(h.offsets.data(), t.offsets, sizeof(std::uint64_t) * h.offsets.size(),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  if (t.n_pairs > 0) {
    EXPECT_EQ(cudaMemcpy(h.neighbors.data(), t.neighbors, sizeof(std::uint32_t) * t.n_pairs,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
  }
  for (std::size_t q = 0; q < t.n_queries; ++q) {
    std::sort(h.neighbors.begin() + static_cast<std::ptrdiff_t>(h.offsets[q]),
              h.neighbors.begin() + static_cast<std::ptrdiff_t>(h.offsets[q + 1]));
  }
  return h;
}

epsjoin::neighbor_table oracle(epsjoin::dataset_view queries, epsjoin::dataset_view data,
                               bool self, double eps, bool include_self) {
  epsjoin::resources res;
  epsjoin::join_options opt;
  opt.eps = eps;
  opt.engine = "brute-cpu";
  opt.include_self = include_self;
  epsjoin::csr_sink sink(true);
  if (self) {
    epsjoin::self_join(res, data, opt, sink);
  } else {
    epsjoin::join(res, queries, data, opt, sink);
  }
  return sink.release();
}

const std::vector<std::string> row_engines = {"lbjoin", "gds-join", "ted-join", "meta-16q",
                                              "meta-1q"};
const std::vector<std::string> host_delivery_engines = {"gpu-sj", "brute-gpu"};

void check_engine(const std::string& engine, bool fills_on_device) {
  const std::uint64_t seed = epsjoin::test::test_seed();
  epsjoin::resources res;
  for (const bool f32 : {false, true}) {
    for (const std::size_t d : {2, 5, 17}) {
      for (const std::size_t n : {0, 1, 2000}) {
        const epsjoin::dataset data = lattice(n, d, seed + n + d, f32);
        const epsjoin::dataset queries = lattice(n / 2 + 1, d, seed + 7 * n + d, f32);
        const device_points on_device(data), queries_on_device(queries);
        for (const bool self : {true, false}) {
          for (const bool include_self : {false, true}) {
            if (!self && include_self) continue;
            const double eps = d == 2 ? 0.25 : 0.5;
            SCOPED_TRACE(engine + (f32 ? " f32" : " f64") + " d=" + std::to_string(d) +
                         " n=" + std::to_string(n) + (self ? " self" : " A x B") +
                         (include_self ? " with self" : ""));
            epsjoin::join_options opt;
            opt.eps = eps;
            opt.engine = engine;
            opt.include_self = include_self;
            opt.precision = f32 ? epsjoin::scalar_type::f32 : epsjoin::scalar_type::f64;
            epsjoin::device_csr_sink sink;
            const epsjoin::join_stats stats =
                self ? epsjoin::self_join(res, on_device.view, opt, sink)
                     : epsjoin::join(res, queries_on_device.view, on_device.view, opt, sink);
            ASSERT_TRUE(sink.has_table());
            const epsjoin::neighbor_table want =
                oracle(queries.view(), data.view(), self, eps, include_self);
            const epsjoin::neighbor_table got = download(sink.table());
            const std::size_t rows = self ? n : queries.n();
            ASSERT_EQ(got.offsets.size(), rows + 1);
            if (want.offsets.empty()) {
              EXPECT_EQ(got.n_pairs(), 0u);
            } else {
              EXPECT_EQ(std::vector<std::uint64_t>(got.offsets.begin(), got.offsets.end()),
                        std::vector<std::uint64_t>(want.offsets.begin(), want.offsets.end()));
              EXPECT_EQ(std::vector<std::uint32_t>(got.neighbors.begin(), got.neighbors.end()),
                        std::vector<std::uint32_t>(want.neighbors.begin(), want.neighbors.end()));
            }
            EXPECT_EQ(stats.pairs + stats.self_pairs, got.n_pairs());
            EXPECT_EQ(stats.h2d_point_bytes, 0u);
            if (fills_on_device && n > 0) {
              EXPECT_EQ(stats.h2d_result_bytes, 0u);
            }

            epsjoin::count_sink counts(true);
            const epsjoin::join_stats counted =
                self ? epsjoin::self_join(res, on_device.view, opt, counts)
                     : epsjoin::join(res, queries_on_device.view, on_device.view, opt, counts);
            EXPECT_EQ(counts.total(), got.n_pairs());
            EXPECT_EQ(counted.h2d_point_bytes, 0u);
          }
        }
      }
    }
  }
}

TEST(device_views, row_filling_engines_leave_the_oracle_table_on_the_device) {
  for (const std::string& e : row_engines) check_engine(e, true);
}

TEST(device_views, pair_delivering_engines_read_device_points) {
  for (const std::string& e : host_delivery_engines) check_engine(e, false);
}

TEST(device_views, host_points_are_counted_as_uploaded) {
  epsjoin::resources res;
  const epsjoin::dataset data = lattice(1000, 3, epsjoin::test::test_seed());
  epsjoin::join_options opt;
  opt.eps = 0.25;
  opt.engine = "lbjoin";
  epsjoin::device_csr_sink sink;
  const epsjoin::join_stats stats = epsjoin::self_join(res, data.view(), opt, sink);
  EXPECT_EQ(stats.h2d_point_bytes, 1000u * 3 * sizeof(double));
  EXPECT_EQ(download(sink.table()).n_pairs(),
            oracle(data.view(), data.view(), true, 0.25, false).n_pairs());
}

TEST(device_views, refusals_are_clear) {
  epsjoin::resources res;
  epsjoin::dataset data = lattice(100, 2, epsjoin::test::test_seed());
  epsjoin::join_options opt;
  opt.eps = 0.25;
  {
    const device_points on_device(data);
    for (const char* engine : {"cpu-grid", "super-ego", "brute-cpu", "hegjoin"}) {
      opt.engine = engine;
      epsjoin::count_sink sink;
      EXPECT_THROW(epsjoin::self_join(res, on_device.view, opt, sink), epsjoin::invalid_argument)
          << engine;
    }
    epsjoin::dataset_view elsewhere = on_device.view;
    elsewhere.device = 1;
    opt.engine = "lbjoin";
    epsjoin::count_sink sink;
    EXPECT_THROW(epsjoin::self_join(res, elsewhere, opt, sink), epsjoin::invalid_argument);
    // Host memory marked as device memory.
    epsjoin::dataset_view lying = data.view();
    lying.space = epsjoin::memory_space::device;
    EXPECT_THROW(epsjoin::self_join(res, lying, opt, sink), epsjoin::invalid_argument);
  }
  data.f64()[2 * 57 + 1] = std::numeric_limits<double>::quiet_NaN();
  const device_points with_nan(data);
  opt.engine = "lbjoin";
  epsjoin::count_sink sink;
  try {
    epsjoin::self_join(res, with_nan.view, opt, sink);
    FAIL() << "a NaN on the device was not refused";
  } catch (const epsjoin::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("point 57, dimension 1 is nan"), std::string::npos)
        << e.what();
  }
}

}  // namespace

// One sink over several joins: each join's table is its own, whether the engine left it on the
// device (lbjoin) or the sink uploaded what came through the host (cpu-grid), and the upload is
// counted in the stats of the join that made it.
TEST(device_views, a_sink_reused_holds_each_joins_table) {
  epsjoin::resources res;
  const epsjoin::dataset data = lattice(1500, 3, epsjoin::test::test_seed());
  epsjoin::device_csr_sink sink;
  epsjoin::join_options opt;
  struct step {
    const char* engine;
    double eps;
  };
  for (const step s : {step{"lbjoin", 0.25}, step{"cpu-grid", 0.125}, step{"cpu-grid", 0.375},
                       step{"lbjoin", 0.125}}) {
    opt.engine = s.engine;
    opt.eps = s.eps;
    const epsjoin::join_stats stats = epsjoin::self_join(res, data.view(), opt, sink);
    const epsjoin::neighbor_table want = oracle(data.view(), data.view(), true, s.eps, false);
    const epsjoin::neighbor_table got = download(sink.table());
    EXPECT_EQ(got.offsets, want.offsets) << s.engine << " eps " << s.eps;
    EXPECT_EQ(got.neighbors, want.neighbors) << s.engine << " eps " << s.eps;
    const bool uploaded = std::string(s.engine) == "cpu-grid";
    EXPECT_EQ(stats.h2d_result_bytes,
              uploaded ? want.offsets.size() * sizeof(std::uint64_t) +
                             want.neighbors.size() * sizeof(std::uint32_t)
                       : 0u)
        << s.engine << " eps " << s.eps;
  }
}
