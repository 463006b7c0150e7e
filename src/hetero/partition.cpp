#include "hetero/partition.hpp"

#include <cmath>

#include "base/expects.hpp"

namespace epsjoin::detail::hetero {

double search_volume_ratio(int d, double eps, double reference_eps) {
  EPSJOIN_EXPECTS(d > 0 && eps > 0 && reference_eps > 0,
                  "search volumes need d > 0 and radii > 0, got d = ", d, ", eps = ", eps,
                  ", reference eps = ", reference_eps);
  // (eps / eps_r)^d through logarithms: at d in the hundreds the power itself leaves the range of
  // a double long before the ratio of two predicted times does.
  return std::exp(static_cast<double>(d) * std::log(eps / reference_eps));
}

partition_model predict_partition(int d, double eps, const reference_times& reference) {
  EPSJOIN_EXPECTS(reference.gpu_seconds > 0 && reference.cpu_seconds > 0,
                  "the partition model needs positive reference times, got GPU ",
                  reference.gpu_seconds, " s and CPU ", reference.cpu_seconds, " s");
  const double scale = search_volume_ratio(d, eps, reference.eps);
  partition_model m;
  m.gpu_seconds = reference.gpu_seconds * scale;
  m.cpu_seconds = reference.cpu_seconds * scale;
  // Throughputs are |D| / T; |D| cancels from the fraction and from |D| / f. So does the volume
  // scale, which is why the fraction comes from the reference times: at d in the hundreds the
  // scaled times may be infinite (or zero) while their ratio is still well defined.
  const double g = reference.gpu_seconds, c = reference.cpu_seconds;
  m.gpu_fraction = c / (g + c);
  m.hybrid_seconds = scale * (g * c / (g + c));
  return m;
}

std::uint32_t gpu_queries_by_count(std::uint32_t n_queries, double gpu_fraction) {
  EPSJOIN_EXPECTS(gpu_fraction >= 0 && gpu_fraction <= 1, "a GPU fraction lies in [0, 1], got ",
                  gpu_fraction);
  return static_cast<std::uint32_t>(std::llround(static_cast<double>(n_queries) * gpu_fraction));
}

std::uint32_t gpu_items_by_candidates(std::span<const std::uint64_t> workloads,
                                      double gpu_fraction) {
  EPSJOIN_EXPECTS(gpu_fraction >= 0 && gpu_fraction <= 1, "a GPU fraction lies in [0, 1], got ",
                  gpu_fraction);
  long double total = 0;
  for (std::uint64_t w : workloads) total += static_cast<long double>(w);
  const long double target = total * gpu_fraction;
  // The cumulative workload grows with the prefix: stop at the first prefix at or past the
  // target, or the one before it if that is closer.
  long double sum = 0;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const long double next = sum + static_cast<long double>(workloads[i]);
    if (next >= target) {
      return static_cast<std::uint32_t>(target - sum <= next - target ? i : i + 1);
    }
    sum = next;
  }
  return static_cast<std::uint32_t>(workloads.size());
}

}  // namespace epsjoin::detail::hetero
