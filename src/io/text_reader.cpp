// Reading a point set from CSV / whitespace text. The whole file is read with fread and parsed
// in place with std::from_chars: no iostreams and no per-value allocation, so the cost is the
// number parsing itself (tens of millions of values a second).
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "io/io_file.hpp"
#include "io/npy_format.hpp"
#include "io/readers.hpp"

namespace epsjoin::detail {

namespace {

constexpr bool is_space(char c) { return c == ' ' || c == '\t'; }
constexpr bool ends_field(char c) { return c == ' ' || c == '\t' || c == ','; }

// The offending field as written, for messages: cut short, control bytes shown as \xNN.
std::string show_field(const char* p, const char* end) {
  constexpr std::size_t max_chars = 40;
  const char* q = p;
  while (q != end && !ends_field(*q)) ++q;
  std::string out;
  for (const char* r = p; r != q && r != p + max_chars; ++r) {
    const auto c = static_cast<unsigned char>(*r);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  if (q - p > static_cast<std::ptrdiff_t>(max_chars)) out += "...";
  return out;
}

std::string read_whole_file(input_file& file) {
  std::string buf;
  if (file.is_regular()) {
    buf.resize(file.size());
    file.read_exact(buf.data(), buf.size(), 0);
    return buf;
  }
  // A pipe or a device: read until the end, doubling the buffer.
  std::size_t used = 0;
  buf.resize(std::size_t{1} << 20);
  while (const std::size_t got = file.read_some(buf.data() + used, buf.size() - used)) {
    used += got;
    if (used == buf.size()) buf.resize(buf.size() * 2);
  }
  buf.resize(used);
  return buf;
}

class text_parser {
 public:
  text_parser(std::string_view path, std::size_t dim) : path_(path), dim_(dim) {}

  dataset run(std::string_view buf) {
    const char* p = buf.data();
    const char* const end = p + buf.size();
    if (buf.empty()) io_fail(path_, "empty file (no points)");
    if (buf.starts_with(npy_magic)) {
      io_fail(path_,
              "this is a NumPy .npy file, not text; name it *.npy or ask for the npy format");
    }
    if (buf.starts_with("\xEF\xBB\xBF")) p += 3;  // a UTF-8 byte-order mark, as Excel writes

    std::size_t d = 0;           // values per point, fixed by the first point
    std::size_t d_line = 0;      // the line that fixed it
    std::size_t blank_line = 0;  // first blank line since the last point, 0 when none
    while (p != end) {
      ++line_;
      const char* const line_start = p;
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      const char* eol = nl != nullptr ? nl : end;
      p = nl != nullptr ? nl + 1 : end;
      if (eol != line_start && eol[-1] == '\r') --eol;  // CRLF

      const char* q = line_start;
      while (q != eol && is_space(*q)) ++q;
      if (q == eol) {
        if (blank_line == 0) blank_line = line_;
        continue;
      }
      if (*q == '#') continue;
      if (blank_line != 0) {
        throw io_error(concat(path_, ": line ", blank_line, ": blank line before or between ",
                              "points (only blank lines at the end of the file are allowed)"));
      }
      const std::size_t count = parse_line(q, eol, d == 0 ? SIZE_MAX : d, d_line);
      if (d == 0) {
        if (dim_ != 0 && count != dim_) {
          fail(std::min(count, dim_) + 1, "the first point has ", count, " values but dim = ", dim_,
               " was requested");
        }
        d = count;
        d_line = line_;
        reserve(buf.size(), static_cast<std::size_t>(p - line_start), d);
      } else if (count < d) {
        fail(count + 1, "found ", count, " values, expected ", d, " (as on line ", d_line, ")");
      }
    }
    if (values_.empty()) io_fail(path_, "no points (only blank or comment lines)");
    return dataset(std::move(values_), d);
  }

 private:
  // Parses the fields of one line from its first non-blank byte; returns how many there were.
  std::size_t parse_line(const char* p, const char* eol, std::size_t limit, std::size_t d_line) {
    for (std::size_t column = 1;; ++column) {
      if (p == eol || *p == ',') fail(column, "empty field (a separator too many?)");
      if (column > limit) {
        fail(column, "more than ", limit, " values (line ", d_line, " has ", limit, ")");
      }
      p = parse_value(p, eol, column);
      while (p != eol && is_space(*p)) ++p;
      if (p == eol) return column;
      if (*p == ',') {
        ++p;
        while (p != eol && is_space(*p)) ++p;
      }
    }
  }

  const char* parse_value(const char* p, const char* eol, std::size_t column) {
    const char* q = p;
    // from_chars takes no '+', but people and other tools write it.
    if (*q == '+' && q + 1 != eol && q[1] != '+' && q[1] != '-') ++q;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(q, eol, v);
    if (ec == std::errc::result_out_of_range) {
      fail(column, "'", show_field(p, eol), "' is outside the range of float64");
    }
    if (ec != std::errc() || (ptr != eol && !ends_field(*ptr))) {
      fail(column, "'", show_field(p, eol), "' is not a number");
    }
    if (!std::isfinite(v)) {
      fail(column, "'", show_field(p, eol), "' is not finite (NaN and infinities are rejected)");
    }
    values_.push_back(v);
    return ptr;
  }

  // Sized from the first line so the vector does not regrow; at most one value per two bytes.
  void reserve(std::size_t file_bytes, std::size_t line_bytes, std::size_t d) {
    const std::size_t lines = file_bytes / std::max<std::size_t>(line_bytes, 1);
    const std::size_t guess = lines + lines / 16 + 1;
    values_.reserve(std::min(guess * d, file_bytes / 2 + d));
  }

  template <class... Parts>
  [[noreturn]] void fail(std::size_t column, Parts&&... parts) const {
    throw io_error(
        concat(path_, ": line ", line_, ", column ", column, ": ", std::forward<Parts>(parts)...));
  }

  std::string_view path_;
  std::size_t dim_;
  std::size_t line_ = 0;  // 1-based number of the line being parsed
  std::vector<double> values_;
};

}  // namespace

dataset parse_text(std::string_view text, std::string_view path, std::size_t dim) {
  return text_parser(path, dim).run(text);
}

dataset read_text(const std::string& path, std::size_t dim) {
  input_file file(path);
  return parse_text(read_whole_file(file), path, dim);
}

}  // namespace epsjoin::detail
