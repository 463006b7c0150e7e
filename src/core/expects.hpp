#pragma once
// Precondition checks that throw epsjoin errors with a message built from their arguments.

#include <sstream>
#include <string>
#include <utility>

#include "epsjoin/error.hpp"

namespace epsjoin::detail {

template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream out;
  out.precision(17);
  (out << ... << std::forward<Parts>(parts));
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
