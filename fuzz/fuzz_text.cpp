// CSV / whitespace text (docs/formats.md): any bytes are read or refused with an io_error, never
// more. A file read once with dim = 0 reads again to the same values with dim = d, is refused
// with dim = d + 1, and its values written as text (17 digits, and shortest) read back the same.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "epsjoin/error.hpp"
#include "io/readers.hpp"
#include "round_trip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace epsjoin;
  const std::string_view text = fuzz::as_text(data, size);
  dataset points;
  try {
    points = detail::parse_text(text, "fuzz.csv", 0);
  } catch (const io_error&) {
    return 0;
  }
  fuzz::check_points(points);
  fuzz::require(points.type() == scalar_type::f64, "text gave float32");
  fuzz::require(fuzz::same_points(points, detail::parse_text(text, "fuzz.csv", points.d())),
                "text read with dim = d differs from the read with dim = 0");
  try {
    detail::parse_text(text, "fuzz.csv", points.d() + 1);
    fuzz::broken("text of dimension d was accepted with dim = d + 1");
  } catch (const io_error&) {
  }
  fuzz::check_round_trip(points, data_format::text, 17);
  fuzz::check_round_trip(points, data_format::text, 0);
  return 0;
}
