#include "epsjoin/generate.hpp"

#include <algorithm>
#include <new>
#include <thread>
#include <vector>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "data/generate_detail.hpp"
#include "data/sample.hpp"

namespace epsjoin {

namespace detail {

namespace {

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// A failed allocation of the points or centres becomes out_of_memory naming the bytes needed.
template <class Make>
std::vector<double> allocate(const generator_spec& spec, std::size_t count, Make&& make) {
  try {
    return make();
  } catch (const std::bad_alloc&) {
    throw out_of_memory(concat("generating ", to_string(spec), " needs ", count * 8,
                               " bytes of host memory, which could not be allocated"));
  }
}

}  // namespace

namespace {

// Rows [first, first + count) of a validated spec, on `threads` threads.
dataset generate_range(const generator_spec& spec, std::size_t first, std::size_t count,
                       unsigned threads) {
  if (threads == 0) threads = hardware_threads();
  const std::size_t centre_values =
      spec.dist == distribution::gaussian_clusters && !spec.paper ? spec.clusters * spec.d : 0;
  const std::size_t total = count * spec.d + centre_values;
  std::vector<double> values =
      allocate(spec, total, [&] { return std::vector<double>(count * spec.d); });
  if (spec.paper) {
    EPSJOIN_EXPECTS(first == 0 && count == spec.n, "generator: the papers' draws come whole");
    generate_paper_expo(spec, values.data(), threads);
  } else {
    const std::vector<double> centres = allocate(spec, total, [&] {
      return centre_values > 0 ? gaussian_centres(spec) : std::vector<double>{};
    });
    // Chunks of about 16k values: small enough to balance, large enough to amortise hand-out.
    const std::size_t grain = std::max<std::size_t>(1, (std::size_t{1} << 14) / spec.d);
    parallel_for(threads, count, grain, [&](std::size_t begin, std::size_t end, unsigned) {
      sample_points(spec, centres.data(), first + begin, first + end,
                    values.data() + begin * spec.d);
    });
  }
  return dataset(std::move(values), spec.d);
}

}  // namespace

dataset generate(const generator_spec& spec, unsigned threads) {
  validate(spec);
  return generate_range(spec, 0, spec.n, threads);
}

}  // namespace detail

dataset generate(const generator_spec& spec) {
  const unsigned threads = spec.n * spec.d < detail::parallel_threshold ? 1 : 0;
  return detail::generate(spec, threads);
}

dataset generate_rows(const generator_spec& spec, std::size_t first, std::size_t count) {
  detail::validate(spec);
  EPSJOIN_ENSURE(!spec.paper, invalid_argument, "generate_rows: ", to_string(spec),
                 " draws its points in sequence (paper mode): generate() makes them all");
  EPSJOIN_ENSURE(first <= spec.n && count <= spec.n - first, invalid_argument,
                 "generate_rows: rows ", first, " to ", first + count, " of ", to_string(spec),
                 ", which has ", spec.n);
  const unsigned threads = count * spec.d < detail::parallel_threshold ? 1 : 0;
  return detail::generate_range(spec, first, count, threads);
}

}  // namespace epsjoin
