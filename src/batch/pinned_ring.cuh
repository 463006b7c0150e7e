#pragma once
// The pinned ring's loop, one for every copy of results from the device to the host: pieces go
// into a ring of pinned buffers, one piece a buffer in flight, and each is taken out on the host
// (in order) while the next ones are copied. Pinned, because a pageable copy goes through the
// driver's own small staging buffer on one thread.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "base/memory.cuh"
#include "base/timer.hpp"

namespace epsjoin::detail {

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
