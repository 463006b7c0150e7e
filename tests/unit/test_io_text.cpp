// The text reader and writer: round trips, the separators and line endings it accepts, and one
// test per way a text file can be wrong, each checking the line and column it reports.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "epsjoin/io.hpp"
#include "support/seed.hpp"
#include "unit/io_test_util.hpp"

namespace {

using epsjoin::data_format;
using epsjoin::dataset;
using epsjoin::read_dataset;
using epsjoin::read_options;
using epsjoin::test::expect_io_error;
using epsjoin::test::scoped_file;
using epsjoin::test::temp_dir;
using epsjoin::test::temp_path;
using epsjoin::test::write_bytes;

// Values across the whole float64 range, the awkward ones included.
std::vector<double> awkward_values(std::size_t count, std::uint64_t seed) {
  std::vector<double> v = {0.0,
                           -0.0,
                           0.1,
                           -1.0 / 3,
                           1e300,
                           -1e-300,
                           5e-324,
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::min(),
                           123456789012345678.0,
                           2.5};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  while (v.size() < count) v.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  v.resize(count);
  return v;
}

dataset read_text(const std::string& path, std::size_t dim = 0) {
  read_options opt;
  opt.format = data_format::text;
  opt.dim = dim;
  return read_dataset(path, opt);
}

dataset parse(const std::string& text, std::size_t dim = 0) {
  scoped_file f(temp_path("in.csv"));
  write_bytes(f, text);
  return read_text(f, dim);
}

std::vector<double> values_of(const dataset& ds) {
  return std::vector<double>(ds.f64(), ds.f64() + ds.n() * ds.d());
}

// Writes `text` to a file named in.csv, reads it and expects an io_error naming the file and
// each of `needles`.
void expect_text_error(const std::string& text, std::initializer_list<std::string_view> needles,
                       std::size_t dim = 0) {
  scoped_file f(temp_path("in.csv"));
  write_bytes(f, text);
  expect_io_error([&] { read_text(f, dim); }, {f.path});
  expect_io_error([&] { read_text(f, dim); }, needles);
}

TEST(io_text, f64_round_trip_with_17_digits_is_exact) {
  const std::size_t n = 500, d = 4;
  const dataset original(awkward_values(n * d, epsjoin::test::test_seed()), d);
  scoped_file f(temp_path("points.csv"));
  epsjoin::write_dataset(f, original.view());  // automatic: .csv is text, 17 digits
  const dataset back = read_dataset(f);
  ASSERT_EQ(back.n(), n);
  ASSERT_EQ(back.d(), d);
  ASSERT_EQ(back.type(), epsjoin::scalar_type::f64);
  EXPECT_EQ(std::memcmp(back.f64(), original.f64(), n * d * sizeof(double)), 0);
}

TEST(io_text, shortest_digits_round_trip_too) {
  const dataset original(awkward_values(300, epsjoin::test::test_seed() + 1), 3);
  scoped_file f(temp_path("points.txt"));
  epsjoin::write_dataset(f, original.view(), data_format::text, 0);
  const dataset back = read_text(f);
  EXPECT_EQ(std::memcmp(back.f64(), original.f64(), 300 * sizeof(double)), 0);
}

TEST(io_text, f32_view_round_trips_through_text) {
  std::vector<float> v = {0.1f, -2.5f, 3.4028235e38f, 1e-45f, 7.0f, -0.0f};
  const dataset original(v, 2);
  for (int digits : {0, 9, 17}) {
    scoped_file f(temp_path("f32.csv"));
    epsjoin::write_dataset(f, original.view(), data_format::text, digits);
    const dataset back = read_text(f);
    ASSERT_EQ(back.n(), 3u);
    for (std::size_t k = 0; k < v.size(); ++k) {
      EXPECT_EQ(static_cast<float>(back.f64()[k]), v[k]) << "digits " << digits << " value " << k;
    }
  }
}

TEST(io_text, few_digits_follow_printf_g) {
  const dataset original(std::vector<double>{3.14159265, 1234567.0}, 2);
  scoped_file f(temp_path("short.csv"));
  epsjoin::write_dataset(f, original.view(), data_format::text, 3);
  EXPECT_EQ(epsjoin::test::read_bytes(f), "3.14,1.23e+06\n");
}

TEST(io_text, bad_digits_are_rejected_before_the_file_is_created) {
  const dataset original(std::vector<double>{1.0, 2.0}, 2);
  const std::string path = temp_path("never.csv");
  EXPECT_THROW(epsjoin::write_dataset(path, original.view(), data_format::text, 18),
               epsjoin::invalid_argument);
  EXPECT_THROW(epsjoin::write_dataset(path, original.view(), data_format::text, -1),
               epsjoin::invalid_argument);
  EXPECT_FALSE(epsjoin::test::file_exists(path));
}

TEST(io_text, accepts_commas_tabs_spaces_and_crlf) {
  const dataset ds = parse("1,2,3\n4\t5\t6\r\n  7 8   9  \n10 , 11 ,\t12\r\n+13,-1.5e1,.5");
  ASSERT_EQ(ds.n(), 5u);
  ASSERT_EQ(ds.d(), 3u);
  EXPECT_EQ(values_of(ds),
            (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, -15, 0.5}));
}

TEST(io_text, accepts_comments_bom_and_trailing_blank_lines) {
  const dataset ds = parse("\xEF\xBB\xBF# x,y\n1,2\n  # between\n3,4\n\n  \r\n# end\n\n");
  ASSERT_EQ(ds.n(), 2u);
  EXPECT_EQ(values_of(ds), (std::vector<double>{1, 2, 3, 4}));
}

TEST(io_text, one_dimension_and_requested_dim) {
  EXPECT_EQ(values_of(parse("1\n2\n3\n")), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(parse("1 2\n3 4\n", 2).d(), 2u);
}

TEST(io_text, subnormals_are_kept) {
  EXPECT_EQ(values_of(parse("4e-320\n")), std::vector<double>{4e-320});
}

TEST(io_text, ragged_rows) {
  expect_text_error("1,2,3\n4,5,6\n7,8\n", {"line 3, column 3", "found 2 values, expected 3"});
  expect_text_error("1,2\n3,4,5\n", {"line 2, column 3", "more than 2 values"});
  expect_text_error("1 2 3\n4 5 6 7 8\n", {"line 2, column 4"});
}

TEST(io_text, non_numbers) {
  expect_text_error("x,y\n1,2\n", {"line 1, column 1", "'x' is not a number"});
  expect_text_error("1,2\n3,abc\n", {"line 2, column 2", "'abc'"});
  expect_text_error("1.5x,2\n", {"line 1, column 1", "'1.5x' is not a number"});
  expect_text_error("1,2\n3,4\n5,6e\n", {"line 3, column 2", "'6e'"});
  expect_text_error("0x10\n", {"line 1, column 1", "'0x10'"});
  expect_text_error("1,+-2\n", {"line 1, column 2"});
  expect_text_error("1;2\n", {"line 1, column 1", "'1;2'"});
  expect_text_error("1\r2\n", {"line 1, column 1", "\\x0d"});
}

TEST(io_text, nan_and_infinities) {
  expect_text_error("1,nan\n", {"line 1, column 2", "not finite"});
  expect_text_error("1,2\n3,NaN\n", {"line 2, column 2", "not finite"});
  expect_text_error("inf,1\n", {"line 1, column 1", "not finite"});
  expect_text_error("1,2\n-infinity,1\n", {"line 2, column 1", "not finite"});
}

TEST(io_text, out_of_range) {
  expect_text_error("1,1e999\n", {"line 1, column 2", "outside the range of float64"});
  expect_text_error("1e-999\n", {"line 1, column 1", "outside the range"});
}

TEST(io_text, empty_fields) {
  expect_text_error("1,,2\n", {"line 1, column 2", "empty field"});
  expect_text_error("1,2\n3,4,\n", {"line 2, column 3", "empty field"});
  expect_text_error(",1,2\n", {"line 1, column 1", "empty field"});
}

TEST(io_text, empty_input) {
  expect_text_error("", {"empty file"});
  expect_text_error("\n\n  \n", {"no points"});
  expect_text_error("# only a comment\n", {"no points"});
}

TEST(io_text, blank_line_before_or_between_points) {
  expect_text_error("1,2\n\n3,4\n", {"line 2:", "blank line"});
  expect_text_error("1,2\n3,4\n \t\r\n# c\n5,6\n", {"line 3:", "blank line"});
  expect_text_error("\n1,2\n", {"line 1:", "blank line"});
}

TEST(io_text, dim_that_disagrees) {
  expect_text_error("1,2\n3,4\n", {"line 1, column 3", "dim = 3"}, 3);
  expect_text_error("1,2,3,4\n", {"line 1, column 4", "dim = 3"}, 3);
}

TEST(io_text, missing_file_and_directory) {
  const std::string missing = temp_path("does_not_exist.csv");
  expect_io_error([&] { read_dataset(missing); }, {missing, "cannot open"});
  expect_io_error([&] { read_text(temp_dir().string()); }, {"directory"});
}

TEST(io_text, npy_read_as_text_says_so) {
  scoped_file f(temp_path("points.dat"));
  epsjoin::write_dataset(f, dataset(std::vector<double>{1, 2}, 2).view(), data_format::npy);
  expect_io_error([&] { read_dataset(f); }, {f.path, ".npy"});
}

}  // namespace
