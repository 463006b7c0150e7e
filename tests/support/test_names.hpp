#pragma once
// Names for parameterised test cases. GoogleTest names a case by its index and prints an
// unnamed parameter as a byte dump; a name that says the case (n, d, eps) is what a reader of
// CTest's list or of a failure needs.

#include <charconv>
#include <string>

namespace epsjoin::test {

/// A number as a test name may hold it (letters, digits and '_' only), shortest round trip:
/// 0.05 -> "0p05", 1e-07 -> "1em07", -2 -> "m2".
inline std::string name_number(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  std::string out;
  for (const char* c = text; c != end; ++c) {
    if (*c == '.') out += 'p';
    else if (*c == '-') out += 'm';
    else if (*c != '+') out += *c;
  }
  return out;
}

}  // namespace epsjoin::test
