#pragma once
// Counts written the way people write dataset sizes: 2000000, 2e6, 2M, 2.5M, 500k, 1G.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace epsjoin::detail {

struct parsed_count {
  std::optional<std::uint64_t> value;  ///< empty when the text is not an exact whole number
  std::string problem;                 ///< without a value: why, as " (...)", or "" if unspecific
};

/// Digits with an optional fraction, an optional decimal exponent (e or E, signed) and an
/// optional suffix k/K (10^3), m/M (10^6) or g/G (10^9). The value must be a whole number:
/// decided exactly in decimal, never through a double, so 1.5e0 is refused and 2.5M is
/// 2500000. Values above 2^64 - 1 are refused too.
parsed_count parse_count(std::string_view text);

}  // namespace epsjoin::detail
