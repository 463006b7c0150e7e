// The --generate / gen SPEC parser: any text is a spec or an invalid_argument. A spec's canonical
// text parses back to the same spec, and a small spec generates finite points of its shape
// (uniform and expo inside [0, 1]).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "check.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/generate.hpp"

namespace {

bool same_spec(const epsjoin::generator_spec& a, const epsjoin::generator_spec& b) {
  return a.dist == b.dist && a.d == b.d && a.n == b.n && a.seed == b.seed && a.lambda == b.lambda &&
         a.clusters == b.clusters && a.sigma == b.sigma && a.paper == b.paper;
}

// Generating is the point of a spec, but only small ones fit a fuzzer's time per input.
constexpr std::size_t max_values = 4096;

void check_generated(const epsjoin::generator_spec& spec) {
  using namespace epsjoin;
  if (spec.n * spec.d > max_values) return;
  if (spec.dist == distribution::gaussian_clusters && spec.clusters * spec.d > max_values) return;
  const dataset points = generate(spec);
  fuzz::require(points.n() == spec.n && (spec.n == 0 || points.d() == spec.d),
                "generated points of another shape than the spec's");
  const bool unit_box = spec.dist != distribution::gaussian_clusters;
  const dataset_view view = points.view();
  for (std::size_t i = 0; i < points.n(); ++i) {
    for (std::size_t k = 0; k < points.d(); ++k) {
      const double v = view.at(i, k);
      fuzz::require(std::isfinite(v), "a spec generated a NaN or an infinity");
      fuzz::require(!unit_box || (v >= 0 && v <= 1), "uniform or expo outside [0, 1]");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace epsjoin;
  generator_spec spec;
  try {
    spec = parse_generator_spec(fuzz::as_text(data, size));
  } catch (const invalid_argument&) {
    return 0;
  }
  fuzz::require(same_spec(spec, parse_generator_spec(to_string(spec))),
                "a spec's canonical text parses to another spec");
  check_generated(spec);
  return 0;
}
