#pragma once
// The query kernel, the dissertation's scheme (ch. 3): K lanes per query, each query on its own
// candidates from global memory, queries taken in the given order or from a work queue. It runs
// twice per join, counting then filling (gpu/row_join/). lbjoin launches it with the plain
// distance loop, gds-join with its ILP test; launch_query.cuh instantiates it.
//
// Rows are written without atomics under the FULL pattern: the lanes of a query take their
// places from a ballot. Under LID-UNICOMP each distance is computed once and both directions are
// written, through per-row atomic cursors.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>

#include "base/emit.cuh"
#include "gpu/agents/candidate_ranges.cuh"
#include "gpu/agents/ilp_within.cuh"
#include "gpu/agents/kernel_contract.cuh"
#include "gpu/agents/row_writes.cuh"
#include "gpu/agents/work_fetch.cuh"

namespace epsjoin::detail::agents {

using row_join::block_threads;
using row_join::join_view;
using row_join::pass;
using row_join::row_output;
using row_join::work_item;

/// K lanes per query; one query per group of K lanes, in `items` order (each item one query).
/// Ilp: gds-join's distance test (ilp_within.cuh) instead of the plain loop.
template <class T, unsigned K, bool Halving, pass Pass, bool Ilp>
__global__ void __launch_bounds__(block_threads)
    query_kernel(join_view<T> v, const work_item* items, std::uint32_t n_items, unsigned* queue,
                 row_output out) {
  namespace cg = cooperative_groups;
  const cg::thread_block_tile<K> tile = cg::tiled_partition<K>(cg::this_thread_block());
  const unsigned sub = tile.thread_rank();
  const std::uint32_t static_item = (blockIdx.x * block_threads + threadIdx.x) / K;
  const unsigned below = (1u << sub) - 1;

  for (bool first_round = true;; first_round = false) {
    const std::uint32_t i = next_group_item(tile, queue, static_item, first_round);
    if (i >= n_items) return;
    const work_item item = items[i];
    const std::uint32_t pos = item.first;
    const T* q = v.query_points + static_cast<std::size_t>(pos) * v.d;
    std::uint32_t found = 0;
    const query_row<Halving, Pass> to(out, pos);
    const std::uint32_t n_ranges = candidate_ranges<T, Halving>(v, item.cell);
    for (std::uint32_t r = 0; r < n_ranges; ++r) {
      const auto [b, e] = candidate_range<T, Halving>(v, item.cell, r, pos + 1);
      for (std::uint32_t base = b; base < e; base += K) {
        const std::uint32_t j = base + sub;
        bool hit = j < e && !(!Halving && v.self_join && j == pos);
        if (hit) {
          const T* p = v.data_points + static_cast<std::size_t>(j) * v.d;
          hit = Ilp ? within_ilp(q, p, v.d, v.eps2) : within(q, p, v.d, v.eps2);
        }
        if constexpr (Pass == pass::count) {
          found += hit;
          if (Halving && hit) atomicAdd(out.counts + j, 1u);
        } else if constexpr (!Halving) {
          const unsigned ballot = tile.ballot(hit);
          if (hit) to.put(out, found + __popc(ballot & below), j, v.data_ids[j]);
          found += __popc(ballot);
        } else {
          if (hit) write_both_rows(out, pos, j, v.data_ids[j], to.my_id);
        }
      }
    }
    if constexpr (Pass == pass::count) {
      found = cg::reduce(tile, found, cg::plus<std::uint32_t>());
      if (sub == 0) store_count<Halving>(out, pos, found);
    }
  }
}

}  // namespace epsjoin::detail::agents
