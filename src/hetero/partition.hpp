#pragma once
// hegjoin's static work partitioning (dissertation sec. 4.4.2). Both static strategies predict
// each side's time at the join's eps from reference times measured at another eps, scaled by the
// ratio of the search volumes (eq. 4.1, 4.2), and give the GPU the fraction of the work its
// throughput is of the two sides' sum (eq. 4.4, 4.5):
//   static-queries     the GPU takes that fraction of the queries (equal-workload assumption);
//   static-candidates  the GPU takes the heaviest queries whose cumulative workload comes
//                      closest to that fraction of all the candidates (unequal workload).
// Dynamic partitioning needs no model: both sides take from the work deque (work_deque.hpp)
// until it is empty.

#include <cstdint>
#include <span>

namespace epsjoin::detail::hetero {

/// Measured times of the GPU-only and CPU-only joins of the same data at radius eps.
struct reference_times {
  double eps = 0;
  double gpu_seconds = 0;
  double cpu_seconds = 0;
};

struct partition_model {
  double gpu_seconds = 0;     ///< predicted GPU-only time at the join's eps (eq. 4.1)
  double cpu_seconds = 0;     ///< predicted CPU-only time (eq. 4.2)
  double hybrid_seconds = 0;  ///< predicted time of the two together, |D| / f (eq. 4.3)
  double gpu_fraction = 0;    ///< f_GPU / (f_GPU + f_CPU) (eq. 4.4; eq. 4.5 is the same ratio)
};

/// v(eps) / v(reference eps) in d dimensions: the constant of the d-ball cancels.
double search_volume_ratio(int d, double eps, double reference_eps);

/// The model for a join in d dimensions at `eps` from reference times (all > 0).
partition_model predict_partition(int d, double eps, const reference_times& reference);

/// static-queries: how many of `n_queries` go to the GPU, |D| p rounded to nearest.
std::uint32_t gpu_queries_by_count(std::uint32_t n_queries, double gpu_fraction);

/// static-candidates: how many of the heaviest items (workloads in the deque's non-increasing
/// order) go to the GPU: the prefix whose cumulative workload is closest to gpu_fraction times
/// the total (the shorter prefix on a tie).
std::uint32_t gpu_items_by_candidates(std::span<const std::uint64_t> workloads,
                                      double gpu_fraction);

/// Fewest GPU batches a join is cut into (sec. 4.4.3): twice the streams under dynamic
/// partitioning, so the GPU's last batches are small enough not to leave the CPU waiting; the
/// streams' number under static partitioning, so every stream has work.
constexpr unsigned min_gpu_batches(unsigned streams, bool dynamic) {
  return dynamic ? 2 * streams : streams;
}

}  // namespace epsjoin::detail::hetero
