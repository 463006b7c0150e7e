#pragma once
// The last stage of every CUDA-core engine: from a kernel launcher to the sink.

#include <functional>

#include "batch/pipeline.cuh"
#include "core/engine.hpp"

namespace epsjoin::detail {

/// Feeds every result of `launch` over queries [0, n_queries) to the sink: when the sink only
/// counts, one `count_launch` pass of per-query counts (by caller id, n_count_ids of them) and no
/// pair moved; otherwise GPU-SJ's sampled estimate, the batch plan (parameters batch_pairs and
/// batches override it) and the stream pipeline. Adds stages and notes to req.stats.
void deliver_gpu_results(join_request& req, gpu_state& gpu, std::uint64_t n_queries,
                         std::size_t n_count_ids, const batch_launcher& launch,
                         const batch_launcher& count_launch);

}  // namespace epsjoin::detail
