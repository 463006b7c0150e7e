// read_options' row ranges and read_shape: every binary format reads any range of its rows, the
// parts of a file put together give the whole file, and text refuses both.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "unit/io_test_util.hpp"

namespace {

using epsjoin::data_format;
using epsjoin::dataset;
using epsjoin::read_options;
using epsjoin::scalar_type;
using epsjoin::test::temp_path;

dataset points(std::size_t n, std::size_t d) {
  std::vector<double> values(n * d);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = 0.25 * static_cast<double>(k) - 3;
  return dataset(std::move(values), d);
}

void expect_rows(const dataset& part, const dataset& whole, std::size_t first) {
  for (std::size_t i = 0; i < part.n(); ++i) {
    for (std::size_t c = 0; c < part.d(); ++c) {
      ASSERT_EQ(part.view().at(i, c), whole.view().at(first + i, c)) << i << " " << c;
    }
  }
}

TEST(IoRowRanges, EveryBinaryFormatReadsAnyRangeAndItsParts) {
  const dataset whole = points(23, 3);
  const struct {
    const char* name;
    scalar_type type;
  } files[] = {{"rows.npy", scalar_type::f64}, {"rows.f64", scalar_type::f64},
               {"rows.f32", scalar_type::f32}};
  for (const auto& f : files) {
    SCOPED_TRACE(f.name);
    const std::string path = temp_path(f.name);
    epsjoin::write_dataset(path, whole.view());
    read_options options;
    options.dim = 3;
    const epsjoin::dataset_shape shape = epsjoin::read_shape(path, options);
    EXPECT_EQ(shape.n, 23u);
    EXPECT_EQ(shape.d, 3u);
    EXPECT_EQ(shape.type, f.type);
    for (std::size_t parts : {1, 2, 4, 7, 30}) {
      std::size_t total = 0;
      for (std::size_t p = 0; p < parts; ++p) {
        options.first_row = 23 * p / parts;
        options.max_rows = 23 * (p + 1) / parts - options.first_row;
        const dataset part = epsjoin::read_dataset(path, options);
        ASSERT_EQ(part.n(), options.max_rows);
        EXPECT_EQ(part.view().type, f.type);
        expect_rows(part, whole, options.first_row);
        total += part.n();
      }
      EXPECT_EQ(total, 23u);
    }
    options.first_row = 20;
    options.max_rows = 100;  // clipped to the file's rows
    EXPECT_EQ(epsjoin::read_dataset(path, options).n(), 3u);
    options.first_row = 40;  // past the end: no points, not an error
    EXPECT_EQ(epsjoin::read_dataset(path, options).n(), 0u);
  }
}

TEST(IoRowRanges, AValueThatIsNotFiniteIsFoundInTheRangeThatHoldsIt) {
  dataset bad = points(10, 2);
  bad.f64()[2 * 7 + 1] = std::numeric_limits<double>::quiet_NaN();
  const std::string path = temp_path("bad.f64");
  epsjoin::write_dataset(path, bad.view(), data_format::raw_f64);
  read_options options;
  options.dim = 2;
  options.max_rows = 5;
  EXPECT_EQ(epsjoin::read_dataset(path, options).n(), 5u);  // rows 0-4 are clean
  options.first_row = 5;
  try {
    epsjoin::read_dataset(path, options);
    FAIL() << "no error";
  } catch (const epsjoin::io_error& e) {
    const std::string message = e.what();  // where the value lies in the file, not in the range
    EXPECT_NE(message.find("byte offset " + std::to_string(8 * (2 * 7 + 1))), std::string::npos)
        << message;
    EXPECT_NE(message.find("point 7, dimension 1"), std::string::npos) << message;
  }
}

TEST(IoRowRanges, TextRefusesRangesAndShapes) {
  const std::string path = temp_path("rows.csv");
  epsjoin::write_dataset(path, points(4, 2).view());
  read_options options;
  EXPECT_EQ(epsjoin::read_dataset(path, options).n(), 4u);
  EXPECT_THROW(epsjoin::read_shape(path, options), epsjoin::invalid_argument);
  options.first_row = 1;
  EXPECT_THROW(epsjoin::read_dataset(path, options), epsjoin::invalid_argument);
}

}  // namespace
