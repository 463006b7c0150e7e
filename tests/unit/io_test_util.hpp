#pragma once
// Helpers for the I/O tests: temporary files (temp_path, in the test's own folder), raw bytes in
// and out, and a check that a call throws io_error with a message naming what it must name.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "epsjoin/error.hpp"
#include "support/temp_dir.hpp"

namespace epsjoin::test {

inline void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write test file " << path;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

/// Little-endian bytes of a trivially copyable value.
template <class T>
std::string bytes_of(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

/// Expects `fn` to throw epsjoin::io_error (any other exception fails the test) whose message
/// contains every one of `needles`.
template <class Fn>
void expect_io_error(Fn&& fn, std::initializer_list<std::string_view> needles) {
  try {
    fn();
  } catch (const io_error& e) {
    const std::string message = e.what();
    for (std::string_view needle : needles) {
      EXPECT_NE(message.find(needle), std::string::npos)
          << "message: " << message << "\nlacks:   " << needle;
    }
    return;
  }
  ADD_FAILURE() << "no io_error was thrown";
}

/// Removes a test file at the end of its scope (the test's folder, removed when the test ends,
/// would take it anyway).
struct scoped_file {
  std::string path;
  explicit scoped_file(std::string p) : path(std::move(p)) {}
  ~scoped_file() { std::remove(path.c_str()); }
  operator const std::string&() const { return path; }
};

}  // namespace epsjoin::test
