// Raw binary point sets, format detection, the CSR file, pairs as CSV, and the real sample data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include "epsjoin/io.hpp"
#include "support/seed.hpp"
#include "unit/io_test_util.hpp"

namespace {

using epsjoin::data_format;
using epsjoin::dataset;
using epsjoin::format_for_path;
using epsjoin::neighbor_table;
using epsjoin::read_dataset;
using epsjoin::read_options;
using epsjoin::test::bytes_of;
using epsjoin::test::expect_io_error;
using epsjoin::test::read_bytes;
using epsjoin::test::scoped_file;
using epsjoin::test::temp_path;
using epsjoin::test::write_bytes;

read_options raw(std::size_t dim, data_format format = data_format::automatic) {
  read_options opt;
  opt.dim = dim;
  opt.format = format;
  return opt;
}

template <class T>
std::string raw_bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST(io_format, from_the_extension) {
  EXPECT_EQ(format_for_path("a.npy"), data_format::npy);
  EXPECT_EQ(format_for_path("dir.x/a.NPY"), data_format::npy);
  EXPECT_EQ(format_for_path("a.f64"), data_format::raw_f64);
  EXPECT_EQ(format_for_path("a.F32"), data_format::raw_f32);
  EXPECT_EQ(format_for_path("a.csv"), data_format::text);
  EXPECT_EQ(format_for_path("a.txt"), data_format::text);
  EXPECT_EQ(format_for_path("dir.npy/points"), data_format::text);
  EXPECT_EQ(format_for_path("points"), data_format::text);
}

TEST(io_raw, f64_and_f32_round_trip) {
  std::mt19937_64 rng(epsjoin::test::test_seed());
  std::normal_distribution<double> g(0.0, 1e3);
  std::vector<double> v(999);
  for (double& x : v) x = g(rng);
  const dataset original(v, 3);

  scoped_file a(temp_path("pts.f64"));
  epsjoin::write_dataset(a, original.view());
  EXPECT_EQ(read_bytes(a), raw_bytes(v));  // no header, little-endian, row-major
  const dataset back = read_dataset(a, raw(3));
  ASSERT_EQ(back.type(), epsjoin::scalar_type::f64);
  ASSERT_EQ(back.n(), 333u);
  EXPECT_EQ(std::memcmp(back.f64(), v.data(), v.size() * 8), 0);

  // f64 view written as f32 converts; it reads back as float32, rounded to nearest.
  scoped_file b(temp_path("pts.f32"));
  epsjoin::write_dataset(b, original.view());
  const dataset back32 = read_dataset(b, raw(3));
  ASSERT_EQ(back32.type(), epsjoin::scalar_type::f32);
  ASSERT_EQ(back32.n(), 333u);
  for (std::size_t k = 0; k < v.size(); ++k) ASSERT_EQ(back32.f32()[k], static_cast<float>(v[k]));

  // And an f32 view written as f64 widens exactly.
  scoped_file c(temp_path("wide.bin"));
  epsjoin::write_dataset(c, back32.view(), data_format::raw_f64);
  const dataset wide = read_dataset(c, raw(3, data_format::raw_f64));
  for (std::size_t k = 0; k < v.size(); ++k) {
    ASSERT_EQ(wide.f64()[k], static_cast<double>(back32.f32()[k]));
  }
}

TEST(io_raw, large_conversion_crosses_blocks) {
  std::vector<double> v(200003);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k) + 0.25;
  scoped_file f(temp_path("big.f32"));
  epsjoin::write_dataset(f, dataset(v, 1).view());
  const dataset back = read_dataset(f, raw(1));
  ASSERT_EQ(back.n(), v.size());
  for (std::size_t k = 0; k < v.size(); ++k) ASSERT_EQ(back.f32()[k], static_cast<float>(v[k]));
}

TEST(io_raw, dim_is_required) {
  scoped_file f(temp_path("pts.f64"));
  write_bytes(f, raw_bytes(std::vector<double>{1, 2}));
  EXPECT_THROW(read_dataset(f), epsjoin::invalid_argument);
}

TEST(io_raw, size_not_a_multiple_of_the_point) {
  scoped_file f(temp_path("pts.f64"));
  write_bytes(f, raw_bytes(std::vector<double>{1, 2, 3, 4, 5}));  // 40 bytes
  expect_io_error([&] { read_dataset(f, raw(2)); }, {f.path, "byte offset 32", "40 bytes"});
  expect_io_error([&] { read_dataset(f, raw(3)); }, {f.path, "byte offset 24", "truncated"});
  expect_io_error([&] { read_dataset(f, raw(6)); }, {f.path, "byte offset 0"});
  write_bytes(f, raw_bytes(std::vector<double>{1, 2, 3, 4}) + "abc");
  expect_io_error([&] { read_dataset(f, raw(1)); }, {f.path, "byte offset 32"});

  scoped_file g(temp_path("pts.f32"));
  write_bytes(g, raw_bytes(std::vector<float>{1, 2, 3}));
  expect_io_error([&] { read_dataset(g, raw(2)); }, {g.path, "byte offset 8"});
}

TEST(io_raw, nan_and_infinity_report_their_byte_offset) {
  scoped_file f(temp_path("pts.f64"));
  std::vector<double> v = {1, 2, 3, 4, 5, std::numeric_limits<double>::infinity()};
  write_bytes(f, raw_bytes(v));
  expect_io_error([&] { read_dataset(f, raw(3)); },
                  {f.path, "byte offset 40", "point 1, dimension 2", "inf"});

  scoped_file g(temp_path("pts.f32"));
  std::vector<float> w(10000, 1.0f);
  w[9001] = std::numeric_limits<float>::quiet_NaN();
  write_bytes(g, raw_bytes(w));
  expect_io_error([&] { read_dataset(g, raw(2)); },
                  {g.path, "byte offset 36004", "point 4500, dimension 1", "nan"});
}

TEST(io_raw, empty_and_missing) {
  scoped_file f(temp_path("empty.f64"));
  write_bytes(f, "");
  expect_io_error([&] { read_dataset(f, raw(3)); }, {f.path, "empty file"});
  const std::string missing = temp_path("missing.f32");
  expect_io_error([&] { read_dataset(missing, raw(3)); }, {missing, "cannot open"});
}

TEST(io_write, unwritable_path_names_the_file) {
  const std::string path = temp_path("no_such_dir") + "/x.csv";
  expect_io_error([&] { epsjoin::write_dataset(path, dataset(std::vector<double>{1}, 1).view()); },
                  {path, "cannot open for writing"});
  expect_io_error([&] { epsjoin::write_pairs_csv(path, {}); }, {path});
  expect_io_error([&] { epsjoin::write_csr(path, {}); }, {path});
}

neighbor_table random_table(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> deg(0, 6), id;
  neighbor_table t;
  t.offsets.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t k = deg(rng); k > 0; --k) t.neighbors.push_back(id(rng));
    t.offsets.push_back(t.neighbors.size());
  }
  return t;
}

TEST(io_csr, round_trip) {
  const neighbor_table t = random_table(1000, epsjoin::test::test_seed());
  scoped_file f(temp_path("t.csr"));
  epsjoin::write_csr(f, t);
  EXPECT_EQ(read_bytes(f).size(), 24 + 8 * 1001 + 4 * t.neighbors.size());
  const neighbor_table back = epsjoin::read_csr(f);
  EXPECT_EQ(back.offsets, t.offsets);
  EXPECT_EQ(back.neighbors, t.neighbors);
}

TEST(io_csr, empty_tables) {
  scoped_file f(temp_path("t.csr"));
  epsjoin::write_csr(f, neighbor_table{});  // no offsets at all: written as offsets = {0}
  EXPECT_EQ(read_bytes(f), std::string("EPSJCSR1") + bytes_of(std::uint64_t{0}) +
                               bytes_of(std::uint64_t{0}) + bytes_of(std::uint64_t{0}));
  neighbor_table back = epsjoin::read_csr(f);
  EXPECT_EQ(back.offsets, epsjoin::offset_vector{0});
  EXPECT_TRUE(back.neighbors.empty());

  neighbor_table rows;
  rows.offsets = {0, 0, 0};
  epsjoin::write_csr(f, rows);
  back = epsjoin::read_csr(f);
  EXPECT_EQ(back.n_queries(), 2u);
  EXPECT_EQ(back.n_pairs(), 0u);
}

TEST(io_csr, inconsistent_tables_are_not_written) {
  neighbor_table t;
  t.offsets = {0, 2, 1};
  t.neighbors = {1};
  const std::string path = temp_path("bad.csr");
  EXPECT_THROW(epsjoin::write_csr(path, t), epsjoin::invalid_argument);
  t.offsets = {0, 2};
  EXPECT_THROW(epsjoin::write_csr(path, t), epsjoin::invalid_argument);
  EXPECT_FALSE(epsjoin::test::file_exists(path));
}

std::string csr_bytes(std::uint64_t nq, std::uint64_t np, const std::vector<std::uint64_t>& off,
                      const std::vector<std::uint32_t>& nb) {
  return "EPSJCSR1" + bytes_of(nq) + bytes_of(np) + raw_bytes(off) + raw_bytes(nb);
}

void expect_csr_error(const std::string& bytes, std::initializer_list<std::string_view> needles) {
  scoped_file f(temp_path("in.csr"));
  write_bytes(f, bytes);
  expect_io_error([&] { epsjoin::read_csr(f); }, {f.path});
  expect_io_error([&] { epsjoin::read_csr(f); }, needles);
}

TEST(io_csr, malformed_files) {
  const std::string good = csr_bytes(2, 3, {0, 1, 3}, {5, 6, 7});
  std::string bad = good;
  bad[7] = '2';
  expect_csr_error(bad, {"byte offset 0", "not an epsjoin CSR file"});
  expect_csr_error("EPSJ", {"byte offset 4", "ends inside"});
  expect_csr_error("hello", {"byte offset 0", "not an epsjoin CSR file"});
  expect_csr_error("", {"empty file"});
  expect_csr_error(good.substr(0, good.size() - 2), {"byte offset 16", "n_pairs = 3"});
  expect_csr_error(good.substr(0, 40), {"byte offset 8", "n_queries = 2"});
  expect_csr_error(good + "xy", {"byte offset " + std::to_string(good.size()), "2 bytes after"});
  expect_csr_error(csr_bytes(1ull << 62, 0, {0}, {}), {"byte offset 8", "n_queries"});
  expect_csr_error(csr_bytes(2, 3, {0, 4, 3}, {5, 6, 7}), {"byte offset 40", "offsets decrease"});
  expect_csr_error(csr_bytes(2, 3, {1, 2, 3}, {5, 6, 7}), {"byte offset 24", "offsets[0]"});
  expect_csr_error(csr_bytes(2, 3, {0, 1, 2}, {5, 6, 7}), {"byte offset 40", "n_pairs = 3"});
}

TEST(io_pairs, csv_lines) {
  const std::vector<epsjoin::index_pair> pairs = {{0, 1}, {12, 3}, {4294967295u, 0}};
  scoped_file f(temp_path("pairs.csv"));
  epsjoin::write_pairs_csv(f, pairs);
  EXPECT_EQ(read_bytes(f), "0,1\n12,3\n4294967295,0\n");
  epsjoin::write_pairs_csv(f, {});
  EXPECT_EQ(read_bytes(f), "");
}

TEST(io_sample, tycho2_xyz_reads_as_50000_unit_vectors) {
  const char* dir = std::getenv("EPSJOIN_DATA_DIR");
  const std::string path = std::string(dir != nullptr ? dir : "") + "/tycho2_xyz_3d_sample.f64";
  if (dir == nullptr || !std::filesystem::exists(path)) {
    GTEST_SKIP() << "sample data absent (" << path << "); set EPSJOIN_DATA_DIR";
  }
  const dataset ds = read_dataset(path, raw(3));
  ASSERT_EQ(ds.n(), 50000u);
  ASSERT_EQ(ds.d(), 3u);
  for (std::size_t i = 0; i < ds.n(); ++i) {
    const double* p = ds.f64() + 3 * i;
    ASSERT_NEAR(p[0] * p[0] + p[1] * p[1] + p[2] * p[2], 1.0, 1e-9) << "star " << i;
  }
  // And through text and .npy, the same values.
  scoped_file txt(temp_path("tycho.csv")), npy(temp_path("tycho.npy"));
  epsjoin::write_dataset(txt, ds.view());
  epsjoin::write_dataset(npy, ds.view());
  for (const std::string* p : {&txt.path, &npy.path}) {
    const dataset back = read_dataset(*p);
    ASSERT_EQ(back.n(), 50000u);
    EXPECT_EQ(std::memcmp(back.f64(), ds.f64(), 150000 * sizeof(double)), 0) << *p;
  }
}

}  // namespace
