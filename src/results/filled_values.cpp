// A result's array of one value, written in parallel (include/epsjoin/result.hpp).

#include <algorithm>
#include <thread>

#include "base/parallel.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin {

std::vector<double, default_init_allocator<double>> filled_values(
    std::size_t n, double value, unsigned threads, const std::function<void(double)>& progress) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double, default_init_allocator<double>> values(n);
  double* const data = values.data();
  // Pieces of 8 MiB: large enough that handing them out costs nothing, small enough that a
  // stop is heard within a few milliseconds.
  detail::parallel_for(
      threads, n, std::size_t{1} << 20,
      [&](std::size_t begin, std::size_t end, unsigned) { std::fill(data + begin, data + end, value); },
      progress);
  return values;
}

}  // namespace epsjoin
