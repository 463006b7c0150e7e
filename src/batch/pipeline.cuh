#pragma once
// The batch engine every GPU engine shares: queries cut into strided batches whose results fit a
// device buffer, run round-robin on the GPU state's streams with pinned staging, so one batch's
// kernel overlaps another's copy and a third's hand-over to the sink on the host. A batch that
// overflows its buffer is detected (its counter runs past the capacity) and re-run in smaller
// pieces: no result is lost or delivered twice.

#include <cstdint>
#include <functional>
#include <vector>

#include "base/emit.cuh"
#include "base/gpu_state.cuh"
#include "base/memory_budget.hpp"
#include "epsjoin/sink.hpp"
#include "model/batches.hpp"

namespace epsjoin::detail {

/// Launches the engine's kernel for one batch on `stream`, writing into `target`.
using batch_launcher =
    std::function<void(const strided_batch& batch, const result_target& target, cudaStream_t)>;

struct pipeline_stats {
  std::uint64_t batches = 0;     ///< kernels that delivered results
  std::uint64_t overflows = 0;   ///< batches re-run in pieces
  std::uint64_t pairs = 0;
  std::uint64_t capacity = 0;    ///< pairs per stream buffer
  double kernel_wait = 0;        ///< host time waiting for kernels (not hidden by overlap)
  double kernel = 0;             ///< device time in the kernels, summed over streams
  double transfer = 0;           ///< host time waiting for device-to-host copies of pairs
  double assembly = 0;           ///< host time handing pairs to the sink
};

/// Counts the pairs `launch` would produce for `batch` (count_total kernels), on stream 0.
std::uint64_t count_batch(gpu_state& gpu, const strided_batch& batch, const batch_launcher& launch);

/// Runs `batches` through the streams and feeds every pair to `sink`. `capacity` pairs per
/// stream buffer (buffers grow to it and are kept in `gpu` for later runs).
void run_batches(gpu_state& gpu, const std::vector<strided_batch>& batches, std::uint64_t capacity,
                 const batch_launcher& launch, result_sink& sink, pipeline_stats& stats,
                 const std::function<void(double)>& progress);

/// How many pairs per stream buffer: the budget's batch_pairs override when set, else the
/// batch-size model of paper 001 sec. 5.4 with its parameters measured on this GPU (once, then
/// cached), within the budget's device and pinned bytes. Throws out_of_memory when not even a
/// minimal buffer fits.
std::uint64_t choose_capacity(gpu_state& gpu, std::uint64_t estimated_pairs,
                              const memory_budget& budget, std::string& reason);

}  // namespace epsjoin::detail
