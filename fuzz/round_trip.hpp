#pragma once
// Whatever a reader accepts, the writer must write so that the reader gives it back bit for bit
// (docs/formats.md promises it for .npy, raw and text at 17 or shortest digits). The file goes to
// /dev/shm when there is one, so the check costs memory copies, not disk writes.

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "check.hpp"
#include "epsjoin/io.hpp"

namespace epsjoin::fuzz {

class scratch_file {
 public:
  explicit scratch_file(const char* extension) {
    const std::filesystem::path shm = "/dev/shm";
    const std::filesystem::path dir =
        std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
    path_ = (dir / ("epsjoin-fuzz-" + std::to_string(::getpid()) + extension)).string();
  }
  ~scratch_file() { std::remove(path_.c_str()); }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  const std::string& path() const { return path_; }

 private:
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
