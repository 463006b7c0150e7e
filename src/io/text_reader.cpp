// Reading a point set from CSV / whitespace text. The whole file is read with fread and parsed
// in place with std::from_chars: no iostreams and no per-value allocation, so the cost is the
// number parsing itself (tens of millions of values a second).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "epsjoin/io.hpp"
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
  /// `share`: the text is one reader's share of a file (text_share), whose lines are numbered
  /// from `first_line` + 1; the checks of the whole file are then the caller's (share_info()).
  text_parser(std::string_view path, std::size_t dim, bool share = false,
              std::uint64_t first_line = 0, bool at_start = true, std::size_t file_d = 0,
              std::uint64_t file_d_line = 0)
      : path_(path),
        dim_(dim),
        share_(share),
        at_start_(at_start),
        line_(first_line),
        file_d_(file_d),
        file_d_line_(file_d_line) {}

  dataset run(std::string_view buf) {
    const char* p = buf.data();
    const char* const end = p + buf.size();
    if (buf.empty() && !share_) io_fail(path_, "empty file (no points)");
    if (at_start_ && buf.starts_with(npy_magic)) {
      io_fail(path_,
              "this is a NumPy .npy file, not text; name it *.npy or ask for the npy format");
    }
    if (at_start_ && buf.starts_with("\xEF\xBB\xBF")) p += 3;  // a UTF-8 byte-order mark

    std::size_t d = file_d_;            // values per point, fixed by the file's first point
    std::size_t d_line = file_d_line_;  // the line that fixed it
    std::size_t blank_line = 0;         // first blank line since the last point, 0 when none
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
    if (values_.empty() && !share_) io_fail(path_, "no points (only blank or comment lines)");
    info_.d = values_.empty() ? 0 : d;
    info_.trailing_blank_line = blank_line;
    return dataset(std::move(values_), std::max<std::size_t>(d, 1));
  }

  const text_share_info& share_info() const { return info_; }

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
  bool share_, at_start_;
  std::size_t line_ = 0;  // 1-based number of the line being parsed
  std::size_t file_d_;    // a share after the file's first point: its values, and its line
  std::uint64_t file_d_line_;
  std::vector<double> values_;
  text_share_info info_;
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

namespace epsjoin {

namespace {

// Whether the byte at `at` of `file` is a line end.
bool ends_line(detail::input_file& file, std::uint64_t at) {
  char byte = 0;
  file.seek(at);
  file.read_exact(&byte, 1, at);
  return byte == '\n';
}

// Just past the first line end at or after byte `from` of a file of `size` bytes; `size` when
// there is none.
std::uint64_t past_line_end(detail::input_file& file, std::uint64_t from, std::uint64_t size) {
  constexpr std::size_t block = std::size_t{1} << 16;
  std::string probe;
  file.seek(from);
  for (; from < size; from += probe.size()) {
    probe.resize(static_cast<std::size_t>(std::min<std::uint64_t>(block, size - from)));
    file.read_exact(probe.data(), probe.size(), from);
    if (const void* nl = std::memchr(probe.data(), '\n', probe.size())) {
      return from + static_cast<std::uint64_t>(static_cast<const char*>(nl) - probe.data()) + 1;
    }
  }
  return size;
}

}  // namespace

text_share read_text_share(const std::string& path, std::uint64_t first_byte,
                           std::uint64_t max_bytes) {
  detail::input_file file(path);
  file.require_regular();
  const std::uint64_t size = file.size();
  text_share share;
  share.file_bytes = size;
  share.at_start = first_byte == 0;
  if (first_byte >= size) return share;
  const std::uint64_t end = max_bytes >= size - first_byte ? size : first_byte + max_bytes;
  // A line belongs to the share its first byte lies in: the share's lines start at its first
  // byte that follows a line end, and the last one runs on to its end, past the share if need be.
  const std::uint64_t start = first_byte == 0 || ends_line(file, first_byte - 1)
                                  ? first_byte
                                  : past_line_end(file, first_byte, size);
  if (start >= end) return share;
  const std::uint64_t stop = end == size || ends_line(file, end - 1) ? end
                                                                      : past_line_end(file, end, size);
  share.text.resize(static_cast<std::size_t>(stop - start));
  file.seek(start);
  file.read_exact(share.text.data(), share.text.size(), start);
  for (const char c : share.text) share.lines += c == '\n';
  if (!share.text.empty() && share.text.back() != '\n') ++share.lines;
  return share;
}

std::size_t first_point_values(const text_share& share, std::uint64_t& line) {
  const char* p = share.text.data();
  const char* const end = p + share.text.size();
  if (share.at_start && share.text.starts_with("\xEF\xBB\xBF")) p += 3;
  for (line = 1; p != end; ++line) {
    const char* nl =
        static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* eol = nl != nullptr ? nl : end;
    const char* q = p;
    p = nl != nullptr ? nl + 1 : end;
    if (eol != q && eol[-1] == '\r') --eol;
    while (q != eol && detail::is_space(*q)) ++q;
    if (q == eol || *q == '#') continue;
    // Fields as the parser separates them: a comma, or blanks, between values.
    std::size_t fields = 1;
    while (q != eol) {
      if (*q == ',' || detail::is_space(*q)) {
        while (q != eol && detail::is_space(*q)) ++q;
        if (q != eol && *q == ',') ++q;
        while (q != eol && detail::is_space(*q)) ++q;
        if (q != eol) ++fields;
      } else {
        ++q;
      }
    }
    return fields;
  }
  line = 0;
  return 0;
}

dataset parse_text_share(const text_share& share, const std::string& path, std::size_t dim,
                         std::uint64_t first_line, text_share_info& info, std::size_t file_d,
                         std::uint64_t file_d_line) {
  detail::text_parser parser(path, dim, true, first_line, share.at_start, file_d, file_d_line);
  dataset points = parser.run(share.text);
  info = parser.share_info();
  if (info.d == 0) return dataset();
  return points;
}

}  // namespace epsjoin
