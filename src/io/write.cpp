// Writing point sets (text, .npy, raw) and pair lists (.npy, CSV). Text is formatted with
// std::to_chars into a large buffer that is written in big blocks.
#include <algorithm>
#include <charconv>
#include <string>
#include <type_traits>
#include <vector>

#include "epsjoin/io.hpp"
#include "io/io_file.hpp"
#include "io/npy_format.hpp"

namespace epsjoin {

namespace {

constexpr std::size_t flush_bytes = std::size_t{1} << 20;

// Formats point after point into `buf`, flushing to `out` every megabyte. digits == 0 asks for
// the shortest text that reads back to the same value of the view's own type.
template <class T>
void write_text_values(detail::output_file& out, const T* values, std::size_t n, std::size_t d,
                       int digits) {
  std::string buf;
  buf.reserve(flush_bytes + 64 * (d + 1));
  char tmp[64];
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < d; ++k) {
      const T v = values[i * d + k];
      const auto res = digits == 0 ? std::to_chars(tmp, tmp + sizeof tmp, v)
                                   : std::to_chars(tmp, tmp + sizeof tmp, static_cast<double>(v),
                                                   std::chars_format::general, digits);
      if (k != 0) buf.push_back(',');
      buf.append(tmp, res.ptr);
    }
    buf.push_back('\n');
    if (buf.size() >= flush_bytes) {
      out.write(buf.data(), buf.size());
      buf.clear();
    }
  }
  out.write(buf.data(), buf.size());
}

// Writes the view's values as `Out`, converting in blocks so no second copy of the set is made.
template <class Out, class In>
void write_converted(detail::output_file& out, const In* values, std::size_t count) {
  if constexpr (std::is_same_v<In, Out>) {
    out.write(values, count * sizeof(Out));
  } else {
    constexpr std::size_t block = std::size_t{1} << 16;
    std::vector<Out> tmp(std::min(count, block));
    for (std::size_t begin = 0; begin < count; begin += block) {
      const std::size_t len = std::min(block, count - begin);
      for (std::size_t k = 0; k < len; ++k) tmp[k] = static_cast<Out>(values[begin + k]);
      out.write(tmp.data(), len * sizeof(Out));
    }
  }
}

template <class Out>
void write_raw(detail::output_file& out, dataset_view data) {
  const std::size_t count = data.n * data.d;
  if (data.type == scalar_type::f64) {
    write_converted<Out>(out, static_cast<const double*>(data.data), count);
  } else {
    write_converted<Out>(out, static_cast<const float*>(data.data), count);
  }
}

}  // namespace

void write_dataset(const std::string& path, dataset_view data, data_format format,
                   int text_digits) {
  EPSJOIN_EXPECTS(data.d > 0 || data.n == 0, path, ": cannot write ", data.n,
                  " points of dimension 0");
  EPSJOIN_EXPECTS(data.data != nullptr || data.n == 0, path, ": the view has ", data.n,
                  " points but no data");
  if (format == data_format::automatic) format = format_for_path(path);
  EPSJOIN_EXPECTS(format != data_format::text || (text_digits >= 0 && text_digits <= 17), path,
                  ": text_digits = ", text_digits, " is not in [0, 17] (17 round-trips float64; ",
                  "0 writes the shortest text that round-trips)");

  detail::output_file out(path);
  switch (format) {
    case data_format::npy: {
      const std::string header =
          detail::npy_header(data.type == scalar_type::f64 ? "<f8" : "<f4", data.n, data.d);
      out.write(header.data(), header.size());
      out.write(data.data, data.n * data.d * size_of(data.type));
      break;
    }
    case data_format::raw_f64:
      write_raw<double>(out, data);
      break;
    case data_format::raw_f32:
      write_raw<float>(out, data);
      break;
    case data_format::text:
    case data_format::automatic:
      if (data.type == scalar_type::f64) {
        write_text_values(out, static_cast<const double*>(data.data), data.n, data.d, text_digits);
      } else {
        write_text_values(out, static_cast<const float*>(data.data), data.n, data.d, text_digits);
      }
      break;
  }
  out.commit();
}

std::string pairs_npy_header(std::uint64_t n_pairs) {
  return detail::npy_header("<u4", n_pairs, 2);
}

void write_pairs_npy(const std::string& path, std::span<const index_pair> pairs) {
  // The pairs go out as they lie in memory: two uint32 per pair, row-major (n, 2).
  static_assert(sizeof(index_pair) == 2 * sizeof(std::uint32_t));
  detail::output_file out(path);
  const std::string header = pairs_npy_header(pairs.size());
  out.write(header.data(), header.size());
  out.write(pairs.data(), pairs.size_bytes());
  out.commit();
}

namespace {

/// Writes one text line per item to `path`, a buffer of flush_bytes at a time; `line` appends
/// the item's line (with its newline) to the buffer.
template <class Item, class Line>
void write_lines(const std::string& path, std::span<const Item> items, Line&& line) {
  detail::output_file out(path);
  std::string buf;
  buf.reserve(flush_bytes + 64);
  for (const Item& item : items) {
    line(buf, item);
    if (buf.size() >= flush_bytes) {
      out.write(buf.data(), buf.size());
      buf.clear();
    }
  }
  out.write(buf.data(), buf.size());
  out.commit();
}

void append_number(std::string& buf, std::uint64_t value) {
  char digits[24];
  buf.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

}  // namespace

namespace {

// A vector as NumPy .npy of shape (n,), with the dtype `descr` names.
template <class T>
void write_npy_vector(const std::string& path, const char* descr, std::span<const T> values) {
  detail::output_file out(path);
  const std::string header = detail::npy_vector_header(descr, values.size());
  out.write(header.data(), header.size());
  out.write(values.data(), values.size_bytes());
  out.commit();
}

}  // namespace

void write_counts(const std::string& path, std::span<const std::uint64_t> counts) {
  if (format_for_path(path) == data_format::npy) return write_npy_vector(path, "<u8", counts);
  write_lines(path, counts, [](std::string& buf, std::uint64_t c) {
    append_number(buf, c);
    buf.push_back('\n');
  });
}

void write_pairs_csv(const std::string& path, std::span<const index_pair> pairs) {
  write_lines(path, pairs, [](std::string& buf, const index_pair& p) {
    append_number(buf, p.query);
    buf.push_back(',');
    append_number(buf, p.neighbor);
    buf.push_back('\n');
  });
}

void write_labels(const std::string& path, std::span<const std::int64_t> labels) {
  if (format_for_path(path) == data_format::npy) return write_npy_vector(path, "<i8", labels);
  write_lines(path, labels, [](std::string& buf, std::int64_t label) {
    char digits[24];
    buf.append(digits, std::to_chars(digits, digits + sizeof digits, label).ptr);
    buf.push_back('\n');
  });
}

namespace {

void append_double(std::string& buf, double value) {
  char digits[32];  // shortest round trip; "inf" for infinity
  buf.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

}  // namespace

void write_optics(const std::string& path, std::span<const std::uint32_t> ordering,
                  std::span<const double> reachability, std::span<const double> core_distances,
                  std::span<const std::int64_t> predecessor, std::span<const std::int64_t> labels) {
  const std::string header = std::string("point,reachability,core_distance,predecessor") +
                             (labels.empty() ? "\n" : ",label\n");
  if (ordering.empty()) {
    detail::output_file out(path);
    out.write(header.data(), header.size());
    return out.commit();
  }
  bool first = true;
  write_lines(path, ordering, [&](std::string& buf, std::uint32_t p) {
    if (first) buf += header;
    first = false;
    append_number(buf, p);
    buf.push_back(',');
    append_double(buf, reachability[p]);
    buf.push_back(',');
    append_double(buf, core_distances[p]);
    buf.push_back(',');
    char digits[24];
    buf.append(digits, std::to_chars(digits, digits + sizeof digits, predecessor[p]).ptr);
    if (!labels.empty()) {
      buf.push_back(',');
      buf.append(digits, std::to_chars(digits, digits + sizeof digits, labels[p]).ptr);
    }
    buf.push_back('\n');
  });
}

}  // namespace epsjoin
