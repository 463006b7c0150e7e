// read_dataset: picks the reader for the format; and the raw binary reader, which is one fread.
#include <algorithm>
#include <cctype>
#include <vector>

#include "epsjoin/io.hpp"
#include "io/io_file.hpp"
#include "io/readers.hpp"

namespace epsjoin {

namespace detail {

namespace {

template <class T>
dataset read_raw_values(input_file& file, std::size_t dim) {
  std::vector<T> values(file.size() / sizeof(T));
  file.read_exact(values.data(), file.size(), 0);
  check_finite(file.path(), values.data(), values.size(), dim, 0);
  return dataset(std::move(values), dim);
}

}  // namespace

dataset read_raw(const std::string& path, std::size_t dim, scalar_type type) {
  EPSJOIN_EXPECTS(dim > 0, path, ": raw ", to_string(type),
                  " input has no header: set read_options::dim to the number of values per point");
  input_file file(path);
  file.require_regular();
  const std::uint64_t size = file.size();
  if (size == 0) io_fail(path, "empty file (no points)");
  const std::uint64_t item = size_of(type);
  if (dim > size / item || size % (dim * item) != 0) {
    const std::uint64_t point_bytes = dim * item;
    const std::uint64_t partial_at = dim > size / item ? 0 : size - size % point_bytes;
    io_fail_at(path, partial_at, "the file's ", size, " bytes are not a whole number of ", dim,
               "-dimensional ", to_string(type), " points (", point_bytes,
               " bytes each): truncated, or the wrong dim or type; the partial point starts here");
  }
  return type == scalar_type::f64 ? read_raw_values<double>(file, dim)
                                  : read_raw_values<float>(file, dim);
}

}  // namespace detail

data_format format_for_path(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return data_format::text;
  }
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".npy") return data_format::npy;
  if (ext == ".f64") return data_format::raw_f64;
  if (ext == ".f32") return data_format::raw_f32;
  return data_format::text;
}

dataset read_dataset(const std::string& path, const read_options& options) {
  const data_format format =
      options.format == data_format::automatic ? format_for_path(path) : options.format;
  switch (format) {
    case data_format::npy:
      return detail::read_npy(path, options.dim);
    case data_format::raw_f64:
      return detail::read_raw(path, options.dim, scalar_type::f64);
    case data_format::raw_f32:
      return detail::read_raw(path, options.dim, scalar_type::f32);
    case data_format::text:
    case data_format::automatic:
      break;
  }
  return detail::read_text(path, options.dim);
}

}  // namespace epsjoin
