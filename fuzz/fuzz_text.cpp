// CSV / whitespace text (docs/formats.md): any bytes are read or refused with an io_error, never
// more. A file read once with dim = 0 reads again to the same values with dim = d, and is refused
// with dim = d + 1.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "check.hpp"
#include "epsjoin/error.hpp"
#include "io/readers.hpp"

namespace {

bool same_values(const epsjoin::dataset& a, const epsjoin::dataset& b) {
  return a.n() == b.n() && a.d() == b.d() &&
         std::memcmp(a.f64(), b.f64(), a.n() * a.d() * sizeof(double)) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace epsjoin;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  dataset points;
  try {
    points = detail::parse_text(text, "fuzz.csv", 0);
  } catch (const io_error&) {
    return 0;
  }
  fuzz::check_points(points);
  fuzz::require(points.type() == scalar_type::f64, "text gave float32");
  fuzz::require(same_values(points, detail::parse_text(text, "fuzz.csv", points.d())),
                "text read with dim = d differs from the read with dim = 0");
  try {
    detail::parse_text(text, "fuzz.csv", points.d() + 1);
    fuzz::broken("text of dimension d was accepted with dim = d + 1");
  } catch (const io_error&) {
  }
  return 0;
}
