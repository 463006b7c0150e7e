#include <numeric>

#include "base/timer.hpp"
#include "batch/deliver.cuh"
#include "batch/rows.cuh"
#include "core/delivery.hpp"

namespace epsjoin::detail {

void deliver_gpu_results(join_request& req, gpu_state& gpu, std::uint64_t n_queries,
                         std::size_t n_count_ids, const batch_launcher& launch,
                         const batch_launcher& count_launch) {
  stopwatch clock;
  const delivery out(req.sink, req.res.threads());
  if (out.form() == delivery_form::counts) {
    // Counts by the caller's ids: no pair is materialised or moved.
    device_buffer<std::uint32_t> counts(std::max<std::size_t>(n_count_ids, 1));
    cudaStream_t stream = gpu.slots[0]->stream.get();
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(counts.data(), 0, sizeof(std::uint32_t) * n_count_ids, stream));
    result_target target;
    target.counts = counts.data();
    count_launch({0, 1, n_queries}, target, stream);
    if (const std::optional<std::size_t> below = out.total_only_below()) {
      out.total(sum_row_counts(counts.data(), nullptr, static_cast<std::uint32_t>(n_count_ids),
                               *below, stream)
                    .below);
      req.stats.add_stage("execute", clock.seconds());
      return;
    }
    std::vector<std::uint32_t> host(n_count_ids);
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(host.data(), counts.data(), sizeof(std::uint32_t) * n_count_ids,
                                     cudaMemcpyDeviceToHost, stream));
    gpu.slots[0]->stream.synchronize();
    std::vector<std::uint32_t> ids(n_count_ids);
    std::iota(ids.begin(), ids.end(), 0u);
    out.counts(ids, host);
    req.stats.add_stage("execute", clock.seconds());
    return;
  }

  // GPU-SJ's estimate: the results of every 100th query, scaled up, plus 5%.
  const std::uint64_t sample_stride = 100;
  const strided_batch sample{0, sample_stride, (n_queries + sample_stride - 1) / sample_stride};
  const std::uint64_t sampled = count_batch(gpu, sample, launch);
  const std::uint64_t estimate = estimate_from_sample(sampled, sample.count, n_queries);
  std::string capacity_reason;
  const std::uint64_t capacity =
      choose_capacity(gpu, estimate, req.budget, capacity_reason);
  const std::uint64_t forced_batches = req.budget.overrides().batches;
  const auto batches = forced_batches > 0
                           ? plan_batches(n_queries, forced_batches * capacity, capacity)
                           : plan_batches(n_queries, estimate, capacity);
  req.stats.add_stage("estimate", clock.seconds());

  clock.restart();
  pipeline_stats ps;
  run_batches(gpu, batches, capacity, launch, req.sink, ps, req.options.progress);
  req.stats.add_stage("execute", clock.seconds() - ps.transfer - ps.assembly);
  req.stats.add_stage("transfer", ps.transfer);
  req.stats.add_stage("assembly", ps.assembly);
  req.stats.notes.push_back({"estimate", concat(estimate, " pairs from ", sample.count, " sampled queries")});
  req.stats.notes.push_back({"kernel seconds", concat(ps.kernel)});
  if (ps.transfer > 0) {
    req.stats.notes.push_back(
        {"device-to-host GB/s", concat(static_cast<double>(ps.pairs * sizeof(index_pair)) / ps.transfer * 1e-9)});
  }
  req.stats.notes.push_back({"batches", concat(ps.batches, " of up to ", capacity, " pairs (",
                                               capacity_reason, "), ", ps.overflows, " re-split")});
}

}  // namespace epsjoin::detail
