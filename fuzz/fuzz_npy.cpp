// NumPy .npy (docs/formats.md) through the real reader and its file code: any bytes are read or
// refused with an io_error. A read is smaller than the file, and written as .npy and as raw binary
// of its own type it reads back the same.
#include <cstddef>
#include <cstdint>

#include "check.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "memory_file.hpp"
#include "round_trip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace epsjoin;
  static fuzz::memory_file file;
  read_options options;
  options.format = data_format::npy;
  dataset points;
  try {
    points = read_dataset(file.hold(data, size), options);
  } catch (const io_error&) {
    return 0;
  }
  fuzz::check_points(points);
  const std::size_t item = points.type() == scalar_type::f64 ? 8 : 4;
  fuzz::require(points.n() * points.d() * item < size, "npy data as large as the whole file");
  fuzz::check_round_trip(points, data_format::npy);
  fuzz::check_round_trip(
      points, points.type() == scalar_type::f64 ? data_format::raw_f64 : data_format::raw_f32);
  return 0;
}
