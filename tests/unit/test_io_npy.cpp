// The .npy reader, the header parser and the .npy writers (points and pairs). Headers of
// versions 2.0 and 3.0 and headers NumPy itself would not write are built by hand here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "epsjoin/io.hpp"
#include "io/npy_format.hpp"
#include "unit/io_test_util.hpp"

namespace {

using epsjoin::data_format;
using epsjoin::dataset;
using epsjoin::read_dataset;
using epsjoin::read_options;
using epsjoin::test::bytes_of;
using epsjoin::test::expect_io_error;
using epsjoin::test::read_bytes;
using epsjoin::test::scoped_file;
using epsjoin::test::temp_path;
using epsjoin::test::write_bytes;

// A .npy file of the given version around `dict`, padded to a multiple of 64 bytes as NumPy
// does (the padding is not required by readers; some tests pass pad = false).
std::string npy_file(int major, std::string dict, std::string_view data, bool pad = true) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  if (pad) {
    while ((preamble + dict.size() + 1) % 64 != 0) dict.push_back(' ');
  }
  dict.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  if (major == 1) {
    out += bytes_of(static_cast<std::uint16_t>(dict.size()));
  } else {
    out += bytes_of(static_cast<std::uint32_t>(dict.size()));
  }
  return out + dict + std::string(data);
}

std::string f64_bytes(const std::vector<double>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

const std::vector<double> six = {1.5, -2, 3, 4e-300, 5, 6};

dataset read_npy_bytes(const std::string& bytes, std::size_t dim = 0) {
  scoped_file f(temp_path("in.npy"));
  write_bytes(f, bytes);
  read_options opt;
  opt.dim = dim;
  return read_dataset(f, opt);
}

// Expects reading `bytes` as in.npy to throw an io_error naming the file and each of `needles`.
void expect_npy_error(const std::string& bytes, std::initializer_list<std::string_view> needles,
                      std::size_t dim = 0) {
  scoped_file f(temp_path("in.npy"));
  write_bytes(f, bytes);
  read_options opt;
  opt.dim = dim;
  expect_io_error([&] { read_dataset(f, opt); }, {f.path});
  expect_io_error([&] { read_dataset(f, opt); }, needles);
}

const std::string good_dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";

TEST(io_npy, f64_and_f32_round_trip_keep_their_type) {
  const dataset f64(six, 3);
  scoped_file a(temp_path("a.npy"));
  epsjoin::write_dataset(a, f64.view());
  const dataset back64 = read_dataset(a);
  ASSERT_EQ(back64.type(), epsjoin::scalar_type::f64);
  ASSERT_EQ(back64.n(), 2u);
  ASSERT_EQ(back64.d(), 3u);
  EXPECT_EQ(std::memcmp(back64.f64(), six.data(), six.size() * sizeof(double)), 0);

  const std::vector<float> v32 = {0.1f, 2, -3, 1e-45f};
  scoped_file b(temp_path("b.npy"));
  epsjoin::write_dataset(b, dataset(v32, 1).view(), data_format::npy);
  const dataset back32 = read_dataset(b);
  ASSERT_EQ(back32.type(), epsjoin::scalar_type::f32);
  ASSERT_EQ(back32.n(), 4u);
  ASSERT_EQ(back32.d(), 1u);
  EXPECT_EQ(std::memcmp(back32.f32(), v32.data(), v32.size() * sizeof(float)), 0);
  // NumPy's header: version 1.0, the data 64-byte aligned.
  const std::string bytes = read_bytes(b);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ((bytes.size() - v32.size() * 4) % 64, 0u);
}

TEST(io_npy, header_round_trip_through_the_parser) {
  const std::string h = epsjoin::detail::npy_header("<f4", 123456789012ull, 7);
  const auto info = epsjoin::detail::parse_npy_header(h, "mem");
  EXPECT_EQ(info.major_version, 1);
  EXPECT_EQ(info.descr, "<f4");
  EXPECT_FALSE(info.fortran_order);
  EXPECT_EQ(info.shape, (std::vector<std::uint64_t>{123456789012ull, 7}));
  EXPECT_EQ(info.data_offset, h.size());
}

TEST(io_npy, version_2_and_3_headers) {
  for (int major : {2, 3}) {
    const dataset ds = read_npy_bytes(npy_file(major, good_dict, f64_bytes(six)));
    ASSERT_EQ(ds.n(), 3u) << "version " << major;
    EXPECT_EQ(std::memcmp(ds.f64(), six.data(), 48), 0);
  }
}

TEST(io_npy, headers_numpy_would_not_write) {
  // Double quotes, other key order, Python 2 longs, no trailing comma, no padding.
  const std::string dict = "{\"shape\":(3L,2L),\"fortran_order\":False,\"descr\":\"<f8\"}";
  EXPECT_EQ(read_npy_bytes(npy_file(1, dict, f64_bytes(six), false)).n(), 3u);
  EXPECT_EQ(read_npy_bytes(npy_file(1, good_dict, f64_bytes(six)), 2).d(), 2u);
}

TEST(io_npy, unsupported_dtypes) {
  for (const char* descr : {"<i4", ">f8", "<f2", "|u1", "<c16"}) {
    const std::string dict =
        "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (3, 2), }";
    expect_npy_error(npy_file(1, dict, f64_bytes(six)),
                     {"byte offset 10", "unsupported dtype '" + std::string(descr) + "'"});
  }
  expect_npy_error(npy_file(1, "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (3,)}",
                            f64_bytes(six)),
                   {"byte offset 20", "structured"});
}

TEST(io_npy, fortran_order) {
  expect_npy_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }", f64_bytes(six)),
      {"byte offset 10", "Fortran order"});
}

TEST(io_npy, bad_magic_and_version) {
  std::string file = npy_file(1, good_dict, f64_bytes(six));
  file[1] = 'M';
  expect_npy_error(file, {"byte offset 0", "not a .npy file"});
  expect_npy_error("1,2\n", {"byte offset 0", "not a .npy file"});
  file = npy_file(1, good_dict, f64_bytes(six));
  file[6] = 4;
  expect_npy_error(file, {"byte offset 6", "version 4.0"});
  file[6] = 1;
  file[7] = 1;
  expect_npy_error(file, {"byte offset 6", "version 1.1"});
}

TEST(io_npy, shapes_other_than_n_by_d) {
  expect_npy_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", f64_bytes(six)),
      {"shape (6,)", "reshape(-1, 1)"});
  expect_npy_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3, 2), }", f64_bytes(six)),
      {"shape (1, 3, 2)", "2-D"});
  expect_npy_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f64_bytes({1.0})),
      {"shape ()"});
  expect_npy_error(npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", ""),
                   {"no points"});
  expect_npy_error(npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 0), }", ""),
                   {"dimension 0"});
}

TEST(io_npy, dim_that_disagrees) {
  expect_npy_error(npy_file(1, good_dict, f64_bytes(six)), {"dimension 2", "dim = 3"}, 3);
}

TEST(io_npy, truncated_and_overlong_data) {
  const std::string whole = npy_file(1, good_dict, f64_bytes(six));
  const std::string cut = whole.substr(0, whole.size() - 3);
  expect_npy_error(cut, {"byte offset " + std::to_string(cut.size()), "truncated"});
  expect_npy_error(whole + "xyz",
                   {"byte offset " + std::to_string(whole.size()), "3 bytes after the end"});
  expect_npy_error(whole.substr(0, 40), {"byte offset 40", "ends inside the .npy header"});
  expect_npy_error(whole.substr(0, 9), {"byte offset 9", "ends inside the .npy header"});
  expect_npy_error("", {"empty file"});
  // A shape whose byte count overflows 64 bits is truncation too, not a huge allocation.
  expect_npy_error(npy_file(1,
                            "{'descr': '<f8', 'fortran_order': False, "
                            "'shape': (4611686018427387904, 4), }",
                            f64_bytes(six)),
                   {"truncated"});
}

TEST(io_npy, malformed_dictionaries) {
  expect_npy_error(npy_file(1, "{'descr': '<f8', 'shape': (3, 2)}", f64_bytes(six)),
                   {"lacks 'fortran_order'"});
  expect_npy_error(npy_file(1,
                            "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), "
                            "'extra': 1}",
                            f64_bytes(six)),
                   {"unexpected key 'extra'"});
  expect_npy_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': Nope, 'shape': (3, 2)}", f64_bytes(six)),
      {"byte offset 44", "True or False"});
  expect_npy_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, -2)}", f64_bytes(six)),
      {"non-negative integer"});
  expect_npy_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2)} x", f64_bytes(six)),
      {"after the .npy header dictionary"});
}

TEST(io_npy, nan_and_infinity_report_their_byte_offset) {
  std::vector<double> v = six;
  v[3] = std::numeric_limits<double>::quiet_NaN();  // point 1, dimension 1
  const std::string file = npy_file(1, good_dict, f64_bytes(v));
  const std::size_t header = file.size() - 48;
  expect_npy_error(
      file, {"byte offset " + std::to_string(header + 3 * 8), "point 1, dimension 1", "NaN"});

  std::vector<float> f = {1, 2, 3, -std::numeric_limits<float>::infinity()};
  const std::string f32 = npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                                   std::string_view(reinterpret_cast<const char*>(f.data()), 16));
  expect_npy_error(
      f32, {"byte offset " + std::to_string(f32.size() - 4), "point 1, dimension 1", "-inf"});
}

TEST(io_npy, pairs_npy_is_n_by_2_uint32) {
  const std::vector<epsjoin::index_pair> pairs = {{0, 1}, {0, 7}, {4294967295u, 3}};
  scoped_file f(temp_path("pairs.npy"));
  epsjoin::write_pairs_npy(f, pairs);
  const std::string bytes = read_bytes(f);
  const auto info = epsjoin::detail::parse_npy_header(bytes, f.path);
  EXPECT_EQ(info.descr, "<u4");
  EXPECT_FALSE(info.fortran_order);
  EXPECT_EQ(info.shape, (std::vector<std::uint64_t>{3, 2}));
  ASSERT_EQ(bytes.size(), info.data_offset + 24);
  std::vector<std::uint32_t> ids(6);
  std::memcpy(ids.data(), bytes.data() + info.data_offset, 24);
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 1, 0, 7, 4294967295u, 3}));

  scoped_file empty(temp_path("none.npy"));
  epsjoin::write_pairs_npy(empty, {});
  EXPECT_EQ(epsjoin::detail::parse_npy_header(read_bytes(empty), empty.path).shape,
            (std::vector<std::uint64_t>{0, 2}));
}

}  // namespace
