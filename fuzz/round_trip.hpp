#pragma once
// Whatever a reader accepts, the writer must write so that the reader gives it back bit for bit
// (docs/formats.md promises it for .npy, raw and text at 17 or shortest digits).

#include <stdlib.h>  // mkdtemp

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "check.hpp"
#include "epsjoin/io.hpp"

namespace epsjoin::fuzz {

// The round trip's file, in a folder of its own made with mkdtemp: under $TMPDIR when it is set
// (whoever set it chose where temporary files go, and scripts/run-tests.sh checks that nothing is
// left there), else in /dev/shm when there is one, so the check costs memory copies, not disk
// writes. The folder goes when the fuzzer exits normally; a crash leaves it with the input.
class scratch_file {
 public:
  explicit scratch_file(const char* extension) {
    std::filesystem::path base = std::filesystem::temp_directory_path();
    const char* tmpdir = std::getenv("TMPDIR");
    if ((tmpdir == nullptr || *tmpdir == '\0') && std::filesystem::is_directory("/dev/shm")) {
      base = "/dev/shm";
    }
    std::string pattern = (base / "epsjoin-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror(("mkdtemp " + pattern).c_str());
      std::abort();
    }
    dir_ = pattern;
    path_ = (dir_ / (std::string("round-trip") + extension)).string();
  }
  ~scratch_file() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

inline bool same_points(const dataset& a, const dataset& b) {
  if (a.n() != b.n() || a.d() != b.d() || a.type() != b.type()) return false;
  const std::size_t count = a.n() * a.d();
  return a.type() == scalar_type::f64 ? std::memcmp(a.f64(), b.f64(), count * sizeof(double)) == 0
                                      : std::memcmp(a.f32(), b.f32(), count * sizeof(float)) == 0;
}

/// Writes `points` in `format` (text with `digits` significant digits) and reads them back.
inline void check_round_trip(const dataset& points, data_format format, int digits = 17) {
  static const scratch_file file(".fuzz");
  write_dataset(file.path(), points.view(), format, digits);
  read_options options;
  options.format = format;
  options.dim = points.d();
  require(same_points(points, read_dataset(file.path(), options)),
          "the values written do not read back the same");
}

}  // namespace epsjoin::fuzz
