// The CSR table in memory (csr_sink), and on the device (device_csr_sink). Pairs from the
// engines that hand over pairs are counted and placed here: the one way pairs become rows.

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "base/cuda_part.hpp"
#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "epsjoin/sink.hpp"
#include "results/distances.hpp"
#include "results/row_copy.hpp"

namespace epsjoin {

namespace {

// Read once: glibc opens /sys/devices/system/cpu/online on every hardware_concurrency() call
// (about 20 us on a loaded machine), twice a one-point EpsIndex query otherwise (issue 46).
unsigned hardware_threads() {
  static const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  return threads;
}

}  // namespace

void csr_sink::begin(const sink_info& info) {
  n_queries_ = info.n_queries;
  queries_ = info.queries;
  data_ = info.data;
  rows_delivered_ = false;
  distances_written_ = false;
  batches_.clear();
  table_ = {};
}

row_destination csr_sink::consume_counts(const count_batch& batch) {
  const std::span<const std::uint32_t> counts = batch.counts;
  EPSJOIN_ENSURE(batch.rows == row_delivery::in_place && counts.size() == n_queries_ &&
                     batch.queries.empty() && batches_.empty() && !rows_delivered_,
                 error, "csr_sink: rows in place with ", counts.size(), " rows for ", n_queries_,
                 " queries, or after pairs were delivered");
  rows_delivered_ = true;
  table_.offsets.resize(n_queries_ + 1);
  const std::uint64_t total = detail::lay_out_offsets(
      counts, 0, table_.offsets.data(), hardware_threads());
  table_.neighbors.resize(total);
  if (!with_distances_) return {table_.neighbors.data(), table_.offsets.data()};
  table_.distances.resize(total);
  if (batch.distances) {
    // Their first writes, on every core and in order: the engine's rows land in random order,
    // and faulting the pages in there cost 0.5 s of a 1M-point graph's 1.5 s (one thread,
    // uniform 2-D, S 50, the 2-core machine); in order here, 0.05 s.
    double* distances = table_.distances.data();
    detail::parallel_for(hardware_threads(), total, std::size_t{1} << 20,
                         [&](std::size_t begin, std::size_t end, unsigned) {
                           std::fill(distances + begin, distances + end, 0.0);
                         });
  }
  distances_written_ = batch.distances;
  return {.neighbors = table_.neighbors.data(),
          .starts = table_.offsets.data(),
          .distances = batch.distances ? table_.distances.data() : nullptr};
}

void csr_sink::consume(std::span<const index_pair> pairs) {
  EPSJOIN_ENSURE(!rows_delivered_, error, "csr_sink: pairs delivered after rows");
  std::vector<index_pair> copy(pairs.begin(), pairs.end());
  std::lock_guard lock(mutex_);
  batches_.push_back(std::move(copy));
}

void csr_sink::finish() {
  if (rows_delivered_) {
    compute_distances();
    sort_rows();
    return;
  }
  // Counting sort by query over the collected batches, in parallel: atomic per-row counts, a
  // prefix sum, then atomic per-row cursors to place each neighbour.
  const unsigned threads = hardware_threads();
  table_.offsets.assign(n_queries_ + 1, 0);
  // Work in pieces of at most 2^20 pairs, so a few huge batches (a GPU engine's) still spread
  // over every thread.
  std::vector<std::span<const index_pair>> pieces;
  for (const auto& batch : batches_) {
    for (std::size_t at = 0; at < batch.size(); at += std::size_t{1} << 20) {
      pieces.emplace_back(batch.data() + at, std::min(batch.size() - at, std::size_t{1} << 20));
    }
  }
  auto over_batches = [&](auto&& per_pair) {
    detail::parallel_for(threads, pieces.size(), 1, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t i = b; i < e; ++i) {
        for (const index_pair& p : pieces[i]) per_pair(p);
      }
    });
  };
  over_batches([&](const index_pair& p) {
    std::atomic_ref<std::uint64_t>(table_.offsets[p.query + 1]).fetch_add(1, std::memory_order_relaxed);
  });
  for (std::size_t i = 0; i < n_queries_; ++i) table_.offsets[i + 1] += table_.offsets[i];
  table_.neighbors.resize(table_.offsets.back());
  std::vector<std::uint64_t> cursor(table_.offsets.begin(), table_.offsets.end() - 1);
  over_batches([&](const index_pair& p) {
    const std::uint64_t at =
        std::atomic_ref<std::uint64_t>(cursor[p.query]).fetch_add(1, std::memory_order_relaxed);
    table_.neighbors[at] = p.neighbor;
  });
  pieces.clear();
  batches_.clear();
  batches_.shrink_to_fit();
  if (with_distances_) table_.distances.resize(table_.neighbors.size());
  compute_distances();
  sort_rows();
}

// Where the engine did not write them with the rows: from the points, once the rows are whole.
void csr_sink::compute_distances() {
  if (!with_distances_ || distances_written_) return;
  detail::table_distances(queries_, data_, table_.offsets, table_.neighbors.data(),
                          table_.distances.data(), hardware_threads());
  distances_written_ = true;
}

void csr_sink::sort_rows() {
  if (!sort_neighbors_) return;
  if (with_distances_) {
    detail::sort_rows_with_distances(table_.offsets, table_.neighbors.data(),
                                     table_.distances.data(), hardware_threads());
  } else {
    detail::sort_rows(table_.offsets, table_.neighbors.data(), hardware_threads());
  }
}

void device_csr_sink::begin(const sink_info& info) {
  n_queries_ = info.n_queries;
  device_ = info.device;
  table_ = {};
  host_.begin(info);
}

void device_csr_sink::finish() {
  host_.finish();
  if (has_table()) return;
  // The engine delivered through the host (or the table did not fit beside its work on the
  // device): the finished host table goes over now.
  neighbor_table host = host_.release();
  if (host.offsets.empty()) host.offsets.assign(n_queries_ + 1, 0);
  table_ = detail::upload_table(device_, host);
}

void device_csr_sink::consume_rows(const row_segment& rows) {
  EPSJOIN_ENSURE(rows.space == memory_space::device && rows.queries.empty() &&
                     rows.first_query == 0 && !rows.offsets.empty() && rows.owner != nullptr,
                 error, "device_csr_sink: rows other than a whole table in device memory");
  // The table's arrays are handed on as they are: `owner` frees them with its last copy.
  table_ = {const_cast<std::uint64_t*>(rows.offsets.data()),
            const_cast<std::uint32_t*>(rows.neighbors.data()), rows.offsets.size() - 1,
            rows.neighbors.size(), rows.device, rows.owner};
}

}  // namespace epsjoin
