// read_dataset: picks the reader for the format; the raw binary probe; and the binary rows'
// reader (npy and raw), one fread of the rows asked for.
#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "epsjoin/io.hpp"
#include "io/io_file.hpp"
#include "io/readers.hpp"

namespace epsjoin {

namespace detail {

namespace {

template <class T>
dataset read_row_values(input_file& file, const binary_layout& layout, std::size_t first,
                        std::size_t count) {
  const std::uint64_t offset = layout.data_offset + first * layout.d * sizeof(T);
  std::vector<T> values(count * layout.d);
  file.seek(offset);
  file.read_exact(values.data(), values.size() * sizeof(T), offset);
  check_finite(file.path(), values.data(), values.size(), layout.d, offset, first);
  return dataset(std::move(values), layout.d);
}

}  // namespace

dataset read_binary_rows(const std::string& path, const binary_layout& layout, std::size_t first,
                         std::size_t count) {
  first = std::min(first, layout.n);
  count = std::min(count, layout.n - first);
  if (count == 0) return dataset(0, layout.d, layout.type);
  input_file file(path);
  return layout.type == scalar_type::f64 ? read_row_values<double>(file, layout, first, count)
                                         : read_row_values<float>(file, layout, first, count);
}

binary_layout probe_raw(const std::string& path, std::size_t dim, scalar_type type) {
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
  return {static_cast<std::size_t>(size / (dim * item)), dim, type, 0};
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

namespace {

// The layout of a binary file, or nothing for text.
std::optional<detail::binary_layout> probe(const std::string& path, const read_options& options) {
  const data_format format =
      options.format == data_format::automatic ? format_for_path(path) : options.format;
  switch (format) {
    case data_format::npy:
      return detail::probe_npy(path, options.dim);
    case data_format::raw_f64:
      return detail::probe_raw(path, options.dim, scalar_type::f64);
    case data_format::raw_f32:
      return detail::probe_raw(path, options.dim, scalar_type::f32);
    case data_format::text:
    case data_format::automatic:
      break;
  }
  return std::nullopt;
}

}  // namespace

dataset read_dataset(const std::string& path, const read_options& options) {
  const auto layout = probe(path, options);
  if (!layout) {
    EPSJOIN_EXPECTS(options.first_row == 0 && options.max_rows == read_options{}.max_rows, path,
                    ": a range of rows is read from binary files (.npy, .f64, .f32) only; text "
                    "rows have no known offsets");
    return detail::read_text(path, options.dim);
  }
  return detail::read_binary_rows(path, *layout, options.first_row, options.max_rows);
}

dataset_shape read_shape(const std::string& path, const read_options& options) {
  const auto layout = probe(path, options);
  EPSJOIN_EXPECTS(layout.has_value(), path,
                  ": the shape is read from binary files (.npy, .f64, .f32) only; text must be "
                  "read to be counted");
  return {layout->n, layout->d, layout->type};
}

}  // namespace epsjoin
