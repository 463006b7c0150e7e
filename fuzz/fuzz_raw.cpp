// Raw little-endian .f64 / .f32 with a dimension (docs/formats.md). The first input byte picks
// the type (bit 0: f32) and the dimension (the other bits, 0 included, which must be refused);
// the rest is the file. A read holds exactly the file's bytes, and writes them back the same.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "check.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "memory_file.hpp"
#include "round_trip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace epsjoin;
  if (size == 0) return 0;
  static fuzz::memory_file file;
  read_options options;
  options.format = (data[0] & 1) != 0 ? data_format::raw_f32 : data_format::raw_f64;
  options.dim = data[0] >> 1;
  const std::uint8_t* bytes = data + 1;
  const std::size_t bytes_size = size - 1;
  dataset points;
  try {
    points = read_dataset(file.hold(bytes, bytes_size), options);
  } catch (const invalid_argument&) {
    fuzz::require(options.dim == 0, "raw input refused as an invalid argument with dim > 0");
    return 0;
  } catch (const io_error&) {
    return 0;
  }
  fuzz::check_points(points);
  fuzz::require(points.d() == options.dim, "raw read with another dimension than asked");
  const bool f32 = options.format == data_format::raw_f32;
  fuzz::require(points.type() == (f32 ? scalar_type::f32 : scalar_type::f64),
                "raw read with another type than asked");
  const void* values = f32 ? static_cast<const void*>(points.f32()) : points.f64();
  fuzz::require(points.n() * points.d() * (f32 ? 4 : 8) == bytes_size &&
                    std::memcmp(values, bytes, bytes_size) == 0,
                "raw values differ from the file's bytes");
  fuzz::check_round_trip(points, options.format);
  return 0;
}
