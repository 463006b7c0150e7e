#pragma once
// Precondition checks that throw epsjoin errors with a message built from their arguments.

#include <charconv>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "epsjoin/error.hpp"

namespace epsjoin::detail {

// Floating-point parts are written shortest round-trip (0.1, not 0.10000000000000001): exact, and
// as short as the value allows, in messages and in the notes a run's summary prints.
template <class Part>
void append_part(std::ostringstream& out, Part&& part) {
  if constexpr (std::is_floating_point_v<std::remove_cvref_t<Part>>) {
    char text[64];
    out.write(text, std::to_chars(text, text + sizeof text, part).ptr - text);
  } else {
    out << std::forward<Part>(part);
  }
}

template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream out;
  (append_part(out, std::forward<Parts>(parts)), ...);
  return out.str();
}

}  // namespace epsjoin::detail

/// Throws epsjoin::invalid_argument with the concatenated message when `cond` is false.
#define EPSJOIN_EXPECTS(cond, ...)                                                 \
  do {                                                                             \
    if (!(cond)) throw ::epsjoin::invalid_argument(::epsjoin::detail::concat(__VA_ARGS__)); \
  } while (0)

/// Throws exception type `type` (an epsjoin::error subclass) when `cond` is false.
#define EPSJOIN_ENSURE(cond, type, ...)                                             \
  do {                                                                             \
    if (!(cond)) throw type(::epsjoin::detail::concat(__VA_ARGS__));               \
  } while (0)
