// read_options' row ranges and read_shape: every binary format reads any range of its rows, the
// parts of a file put together give the whole file, and text refuses both. Text's own shares
// (read_text_share, parse_text_share): cut at every byte, the shares give the whole file's points
// and lines.
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

// Two shares cut at every byte of a file with a byte-order mark, comments, CRLF, blank lines at
// the end and lines of different lengths: together they hold every line once and the whole
// file's points, in order; the shares after the first point check theirs against it.
TEST(IoTextShares, TwoSharesCutAtEveryByteGiveTheWholeFile) {
  const std::string text =
      "\xEF\xBB\xBF# header\r\n1,2\r\n  3 , 4\r\n# note\n5\t6\n7,8.5\n\n\n";
  const std::string path = temp_path("shares.csv");
  epsjoin::test::write_bytes(path, text);
  const dataset whole = epsjoin::read_dataset(path);
  for (std::uint64_t cut = 0; cut <= text.size(); ++cut) {
    SCOPED_TRACE(cut);
    const epsjoin::text_share a = epsjoin::read_text_share(path, 0, cut);
    const epsjoin::text_share b = epsjoin::read_text_share(path, cut, text.size());
    EXPECT_EQ(a.text + b.text, text);
    EXPECT_EQ(a.lines + b.lines, 8u);
    epsjoin::text_share_info ia, ib;
    const dataset pa = epsjoin::parse_text_share(a, path, 0, 0, ia);
    std::uint64_t within = 0;
    const std::size_t values = epsjoin::first_point_values(a, within);
    const dataset pb = epsjoin::parse_text_share(b, path, 0, a.lines, ib, values,
                                                 values == 0 ? 0 : within);
    ASSERT_EQ(pa.n() + pb.n(), whole.n());
    expect_rows(pa, whole, 0);
    expect_rows(pb, whole, pa.n());
    EXPECT_EQ(ia.trailing_blank_line != 0 || ib.trailing_blank_line != 0, true);
  }
}

TEST(IoTextShares, ALaterShareNamesTheWholeFilesLines) {
  const std::string text = "1,2\n3,4\n5,6\n7\n";
  const std::string path = temp_path("short.csv");
  epsjoin::test::write_bytes(path, text);
  const epsjoin::text_share b = epsjoin::read_text_share(path, 8, text.size());
  epsjoin::text_share_info info;
  EXPECT_EQ(b.text, "5,6\n7\n");
  epsjoin::test::expect_io_error(
      [&] { epsjoin::parse_text_share(b, path, 0, 2, info, 2, 1); },
      {"line 4, column 2: found 1 values, expected 2 (as on line 1)"});
}

}  // namespace
