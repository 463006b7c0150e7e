#include "data/count_parse.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace epsjoin::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int suffix_exponent(char c) {
  switch (c) {
    case 'k':
    case 'K':
      return 3;
    case 'm':
    case 'M':
      return 6;
    case 'g':
    case 'G':
      return 9;
    default:
      return -1;
  }
}

parsed_count failure(std::string problem = {}) { return {std::nullopt, std::move(problem)}; }

}  // namespace

parsed_count parse_count(std::string_view text) {
  if (text.empty()) return failure(" (it is empty)");
  if (text.front() == '-') return failure(" (it is negative)");
  std::size_t at = 0;
  std::string digits;  // integer and fraction digits, the decimal point removed
  long long exponent = 0;
  for (; at < text.size() && is_digit(text[at]); ++at) digits += text[at];
  if (at < text.size() && text[at] == '.') {
    for (++at; at < text.size() && is_digit(text[at]); ++at, --exponent) digits += text[at];
  }
  if (digits.empty()) return failure();
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    const bool negative = at < text.size() && text[at] == '-';
    if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
    if (at == text.size() || !is_digit(text[at])) return failure();
    long long e = 0;
    // Clamp: any exponent beyond 10^6 is already out of range either way.
    for (; at < text.size() && is_digit(text[at]); ++at) {
      e = std::min(e * 10 + (text[at] - '0'), 1000000LL);
    }
    exponent += negative ? -e : e;
  }
  if (at + 1 == text.size() && suffix_exponent(text[at]) >= 0) {
    exponent += suffix_exponent(text[at++]);
  }
  if (at != text.size()) return failure();

  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return {0, {}};
  digits.erase(0, first);
  // Scale by 10^exponent exactly: drop zeros for a negative exponent, append for a positive one.
  for (; exponent < 0; ++exponent) {
    if (digits.size() <= 1 || digits.back() != '0') {
      return failure(" (it is not a whole number)");
    }
    digits.pop_back();
  }
  if (static_cast<long long>(digits.size()) + exponent > 20) return failure(" (it is too large)");
  digits.append(static_cast<std::size_t>(exponent), '0');
  std::uint64_t value = 0;
  for (const char c : digits) {
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::uint64_t{UINT64_MAX} - digit) / 10) return failure(" (it is too large)");
    value = value * 10 + digit;
  }
  return {value, {}};
}

}  // namespace epsjoin::detail
