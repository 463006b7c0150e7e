// Reading a point set from NumPy .npy: validate the header and the size; the values are read by
// read_binary_rows (read.cpp), the whole array or a range of its rows.
#include <algorithm>
#include <limits>
#include <vector>

#include "io/io_file.hpp"
#include "io/npy_format.hpp"
#include "io/readers.hpp"

namespace epsjoin::detail {

namespace {

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    s += std::to_string(shape[k]);
    s += shape.size() == 1 || k + 1 < shape.size() ? "," : "";
    s += k + 1 < shape.size() ? " " : "";
  }
  return s + ")";
}

npy_header_info read_header(input_file& file) {
  const std::string& path = file.path();
  std::string header(std::min<std::uint64_t>(file.size(), npy_prefix_bytes), '\0');
  file.read_exact(header.data(), header.size(), 0);
  const std::size_t header_bytes = npy_header_size(header, path);
  if (header_bytes > file.size()) {
    io_fail_at(path, file.size(), "file ends inside the .npy header, which claims ", header_bytes,
               " bytes");
  }
  // A header shorter than the prefix already read cannot hold a dictionary; the parser says so.
  if (header_bytes > header.size()) {
    const std::size_t have = header.size();
    header.resize(header_bytes);
    file.read_exact(header.data() + have, header_bytes - have, have);
  }
  return parse_npy_header(std::string_view(header).substr(0, header_bytes), path);
}

}  // namespace

binary_layout probe_npy(const std::string& path, std::size_t dim) {
  input_file file(path);
  file.require_regular();
  if (file.size() == 0) io_fail(path, "empty file (no .npy header, no points)");
  const npy_header_info info = read_header(file);
  const std::size_t where = info.major_version == 1 ? 10 : 12;  // the dictionary's first byte

  scalar_type type = scalar_type::f64;
  if (info.descr == "<f8") {
    type = scalar_type::f64;
  } else if (info.descr == "<f4") {
    type = scalar_type::f32;
  } else {
    io_fail_at(path, where, "unsupported dtype '", info.descr,
               "'; epsjoin reads '<f8' (float64) and '<f4' (float32); convert with "
               "arr.astype('<f8')");
  }
  if (info.fortran_order) {
    io_fail_at(path, where, "the array is in Fortran order; save np.ascontiguousarray(arr)");
  }
  if (info.shape.size() != 2) {
    io_fail_at(path, where, "shape ", shape_text(info.shape),
               " is not (n, d); points must be a 2-D array",
               info.shape.size() == 1 ? " (for 1-D points save arr.reshape(-1, 1))" : "");
  }
  const std::uint64_t n = info.shape[0], d = info.shape[1];
  if (n == 0) io_fail_at(path, where, "shape ", shape_text(info.shape), " holds no points");
  if (d == 0) io_fail_at(path, where, "shape ", shape_text(info.shape), ": points of dimension 0");
  if (dim != 0 && dim != d) {
    io_fail_at(path, where, "the points have dimension ", d, " but dim = ", dim, " was requested");
  }

  const std::uint64_t item = size_of(type);
  const std::uint64_t available = file.size() - info.data_offset;
  if (n > std::numeric_limits<std::uint64_t>::max() / d / item || n * d * item > available) {
    io_fail_at(path, file.size(), "truncated: shape ", shape_text(info.shape), " of ", info.descr,
               " needs ", n, " x ", d, " x ", item, " bytes after the ", info.data_offset,
               "-byte header, the file holds ", available);
  }
  if (n * d * item < available) {
    io_fail_at(path, info.data_offset + n * d * item, available - n * d * item,
               " bytes after the end of the ", shape_text(info.shape), " array");
  }
  return {static_cast<std::size_t>(n), static_cast<std::size_t>(d), type, info.data_offset};
}

}  // namespace epsjoin::detail
