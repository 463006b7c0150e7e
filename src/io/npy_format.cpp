#include "io/npy_format.hpp"

#include <charconv>
#include <stdexcept>

#include "io/io_file.hpp"

namespace epsjoin::detail {

namespace {

std::string header_with_shape(std::string_view descr, const std::string& shape,
                              std::size_t min_bytes) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" +
                     shape + "), }";
  constexpr std::size_t preamble = 10;  // magic (6) + version (2) + header length (2)
  std::size_t total = preamble + dict.size() + 1;
  std::size_t padded = (total + 63) / 64 * 64;
  while (padded < min_bytes) padded += 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  const std::size_t header_len = dict.size();
  if (header_len > 0xffff) throw std::logic_error("npy header too long");
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header_len & 0xff));
  out.push_back(static_cast<char>(header_len >> 8));
  return out + dict;
}

}  // namespace

std::string npy_header(std::string_view descr, std::uint64_t rows, std::uint64_t cols,
                       std::size_t min_bytes) {
  return header_with_shape(descr, std::to_string(rows) + ", " + std::to_string(cols), min_bytes);
}

std::string npy_vector_header(std::string_view descr, std::uint64_t n) {
  // A one-element tuple needs its comma: (n,).
  return header_with_shape(descr, std::to_string(n) + ",", 0);
}

namespace {

std::size_t preamble_bytes(int major) { return major == 1 ? 10 : 12; }

std::uint64_t little_endian(std::string_view bytes) {
  std::uint64_t v = 0;
  for (std::size_t k = bytes.size(); k-- > 0;) v = v << 8 | static_cast<unsigned char>(bytes[k]);
  return v;
}

// The header dictionary is a Python literal. NumPy writes one fixed shape of it, but other
// writers (cnpy, old NumPy on Python 2 with 3L lengths, hand-made files) vary the spacing,
// quotes, key order and trailing commas, so this is a small real parser rather than a match.
class dict_parser {
 public:
  dict_parser(std::string_view text, std::size_t base, std::string_view path)
      : text_(text), base_(base), path_(path) {}

  npy_header_info parse() {
    npy_header_info info;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::size_t key_at = pos_;
      const std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &seen_descr;
        if (peek() != '\'' && peek() != '"') {
          fail("'descr' is not a simple dtype string (structured dtypes are not supported)");
        }
        info.descr = parse_string();
      } else if (key == "fortran_order") {
        seen = &seen_order;
        info.fortran_order = parse_bool();
      } else if (key == "shape") {
        seen = &seen_shape;
        info.shape = parse_shape();
      } else {
        fail_at(key_at, "unexpected key '", key, "' in the .npy header");
      }
      if (*seen) fail_at(key_at, "key '", key, "' appears twice in the .npy header");
      *seen = true;
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        fail("expected ',' or '}' in the .npy header");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected characters after the .npy header dictionary");
    if (!seen_descr || !seen_order || !seen_shape) {
      fail_at(0, "the .npy header lacks ",
              !seen_descr   ? "'descr'"
              : !seen_order ? "'fortran_order'"
                            : "'shape'");
    }
    return info;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void expect(char c) {
    if (peek() != c) fail("expected '", c, "' in the .npy header");
    ++pos_;
  }

  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string in the .npy header");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string in the .npy header");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    if (s.find('\\') != std::string::npos) fail("escape sequences in .npy header strings");
    pos_ = end + 1;
    return s;
  }

  bool parse_bool() {
    for (const bool value : {true, false}) {
      const std::string_view word = value ? "True" : "False";
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("expected True or False in the .npy header");
  }

  std::vector<std::uint64_t> parse_shape() {
    std::vector<std::uint64_t> shape;
    expect('(');
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      std::uint64_t v = 0;
      const char* first = text_.data() + pos_;
      const auto [ptr, ec] = std::from_chars(first, text_.data() + text_.size(), v);
      if (ec != std::errc()) fail("expected a non-negative integer in the .npy shape");
      pos_ += static_cast<std::size_t>(ptr - first);
      if (peek() == 'L') ++pos_;  // Python 2 long literal
      shape.push_back(v);
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the .npy shape");
      }
    }
    ++pos_;
    return shape;
  }

  template <class... Parts>
  [[noreturn]] void fail(Parts&&... parts) const {
    fail_at(pos_, std::forward<Parts>(parts)...);
  }
  template <class... Parts>
  [[noreturn]] void fail_at(std::size_t at, Parts&&... parts) const {
    io_fail_at(path_, base_ + at, std::forward<Parts>(parts)...);
  }

  std::string_view text_;
  std::size_t base_;
  std::string_view path_;
  std::size_t pos_ = 0;
};

}  // namespace

std::size_t npy_header_size(std::string_view first_bytes, std::string_view path) {
  if (first_bytes.substr(0, npy_magic.size()) != npy_magic) {
    io_fail_at(path, 0, "not a .npy file (it does not start with the magic string \\x93NUMPY)");
  }
  if (first_bytes.size() < 8)
    io_fail_at(path, first_bytes.size(), "file ends inside the .npy header");
  const int major = static_cast<unsigned char>(first_bytes[6]);
  const int minor = static_cast<unsigned char>(first_bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    io_fail_at(path, 6, "unsupported .npy format version ", major, ".", minor,
               " (1.0, 2.0 and 3.0 are read)");
  }
  const std::size_t preamble = preamble_bytes(major);
  if (first_bytes.size() < preamble) {
    io_fail_at(path, first_bytes.size(), "file ends inside the .npy header");
  }
  return preamble + little_endian(first_bytes.substr(8, preamble - 8));
}

npy_header_info parse_npy_header(std::string_view header, std::string_view path) {
  const std::size_t total = npy_header_size(header, path);
  if (header.size() < total) io_fail_at(path, header.size(), "file ends inside the .npy header");
  const int major = static_cast<unsigned char>(header[6]);
  const std::size_t preamble = preamble_bytes(major);
  npy_header_info info =
      dict_parser(header.substr(preamble, total - preamble), preamble, path).parse();
  info.major_version = major;
  info.data_offset = total;
  return info;
}

}  // namespace epsjoin::detail
