#pragma once
// Reading engine parameters (join_options::params) with errors that name the key and the
// accepted values.

#include <charconv>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "base/expects.hpp"

namespace epsjoin::detail {

using param_map = std::map<std::string, std::string>;

inline std::uint64_t param_uint(const param_map& params, const std::string& key,
                                std::uint64_t fallback, std::uint64_t min = 0,
                                std::uint64_t max = UINT64_MAX) {
  auto it = params.find(key);
  if (it == params.end()) return fallback;
  const std::string& text = it->second;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  EPSJOIN_EXPECTS(ec == std::errc() && end == text.data() + text.size() && value >= min &&
                      value <= max,
                  "parameter ", key, " must be an integer in [", min, ", ", max, "], got '", text,
                  "'");
  return value;
}

/// The parameter's value as a number in [min, max]; `fallback` when absent.
inline double param_real(const param_map& params, const std::string& key, double fallback,
                         double min, double max) {
  auto it = params.find(key);
  if (it == params.end()) return fallback;
  const std::string& text = it->second;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  EPSJOIN_EXPECTS(ec == std::errc() && end == text.data() + text.size() && value >= min &&
                      value <= max,
                  "parameter ", key, " must be a number in [", min, ", ", max, "], got '", text,
                  "'");
  return value;
}

/// The parameter's value, which must be one of `choices`; `fallback` when absent.
inline std::string param_choice(const param_map& params, const std::string& key,
                                std::initializer_list<std::string_view> choices,
                                std::string_view fallback) {
  auto it = params.find(key);
  if (it == params.end()) return std::string(fallback);
  std::string list;
  for (std::string_view c : choices) {
    if (c == it->second) return it->second;
    list += concat(list.empty() ? "" : ", ", c);
  }
  throw invalid_argument(concat("parameter ", key, " must be one of ", list, "; got '", it->second,
                                "'"));
}

}  // namespace epsjoin::detail
