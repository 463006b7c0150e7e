#pragma once
// The pinned ring's loop, one for every copy of results from the device to the host: pieces go
// into a ring of pinned buffers, one piece a buffer in flight, and each is taken out on the host
// (in order) while the next ones are copied. Pinned, because a pageable copy goes through the
// driver's own small staging buffer on one thread.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <future>
#include <vector>

#include "base/gpu_state.cuh"
#include "base/memory.cuh"
#include "base/memory_budget.hpp"
#include "base/timer.hpp"

namespace epsjoin::detail {

/// Ids a chunk of the ring (gpu_state::row_chunks) holds: the budget's override, or 64 MiB.
inline std::uint64_t ring_chunk_ids(const memory_budget& budget) {
  constexpr std::uint64_t default_chunk_ids = std::uint64_t{1} << 24;
  return budget.overrides().chunk_ids > 0 ? budget.overrides().chunk_ids : default_chunk_ids;
}

/// Reserves every chunk of the ring for `chunk_ids` ids on a thread of its own (pinning is
/// slow: 0.1 s for a process's first 3 x 64 MiB on an H200), to be waited for before the ring
/// is used.
inline std::future<void> reserve_ring(gpu_state& gpu, std::uint64_t chunk_ids) {
  return std::async(std::launch::async, [&gpu, chunk_ids] {
    EPSJOIN_CUDA_TRY(cudaSetDevice(gpu.device));
    for (auto& slot : gpu.row_chunks) slot.reserve(chunk_ids);
  });
}

/// Host seconds of one ring run: waiting for pieces to arrive, and placing them.
struct ring_times {
  double waiting = 0;
  double placing = 0;
};

/// Moves pieces [0, pieces) from the device to the host through `ring` (an array of
/// pinned_buffer, each with room for the largest piece) on `stream`.
///   issue(k, slot): enqueues piece k's copy into `slot` on `stream`, after whatever it waits on;
///   place(k, slot): takes piece k out of `slot` once it has arrived, for k = 0, 1, ... in order;
///     the slot then takes the first piece not yet issued;
///   started(): runs once the first pieces are in flight, before the first wait (host work that
///     overlaps them).
template <class Ring, class Issue, class Place, class Started>
ring_times copy_through_ring(Ring& ring, cudaStream_t stream, std::size_t pieces, Issue&& issue,
                             Place&& place, Started&& started) {
  const std::size_t slots = ring.size();
  std::vector<cuda_event> ready(slots);
  std::size_t issued = 0;
  auto issue_next = [&] {
    const std::size_t slot = issued % slots;
    issue(issued, ring[slot].data());
    ready[slot].record(stream);
    ++issued;
  };
  while (issued < std::min(pieces, slots)) issue_next();
  started();
  ring_times times;
  for (std::size_t k = 0; k < pieces; ++k) {
    stopwatch clock;
    EPSJOIN_CUDA_TRY(cudaEventSynchronize(ready[k % slots].get()));
    times.waiting += clock.seconds();
    clock.restart();
    place(k, ring[k % slots].data());
    times.placing += clock.seconds();
    if (issued < pieces) issue_next();
  }
  return times;
}

template <class Ring, class Issue, class Place>
ring_times copy_through_ring(Ring& ring, cudaStream_t stream, std::size_t pieces, Issue&& issue,
                             Place&& place) {
  return copy_through_ring(ring, stream, pieces, issue, place, [] {});
}

}  // namespace epsjoin::detail
