#include "cluster/dbscan_sinks.hpp"

#include <atomic>

#include "base/expects.hpp"
#include "base/parallel.hpp"

namespace epsjoin::detail {

namespace {

void add(std::uint32_t& count, std::uint32_t more) {
  std::atomic_ref<std::uint32_t>(count).fetch_add(more, std::memory_order_relaxed);
}

void add(double& sum, double more) {
  std::atomic_ref<double>(sum).fetch_add(more, std::memory_order_relaxed);
}

void lower_to(std::uint32_t& value, std::uint32_t candidate) {
  std::atomic_ref<std::uint32_t> ref(value);
  std::uint32_t now = ref.load(std::memory_order_relaxed);
  while (candidate < now && !ref.compare_exchange_weak(now, candidate, std::memory_order_relaxed)) {
  }
}

// CPU engines hand over per-thread buffers of 2^15 pairs from many threads at once; a batch
// far larger than that comes from a GPU engine's delivery thread and is worth splitting.
constexpr std::size_t split_batch_pairs = std::size_t{1} << 20;

}  // namespace

void neighbour_count_sink::consume(std::span<const index_pair> pairs) {
  for (const index_pair& p : pairs) add(counts_[p.query], 1);
}

row_destination neighbour_count_sink::consume_counts(const count_batch& batch) {
  const std::span<const std::uint32_t> queries = batch.queries, counts = batch.counts;
  EPSJOIN_ENSURE(batch.rows == row_delivery::none && batch.total == 0 &&
                     queries.size() == counts.size(),
                 error, "neighbour_count_sink: ", queries.size(), " query ids but ",
                 counts.size(), " counts, or a total");
  for (std::size_t k = 0; k < queries.size(); ++k) add(counts_[queries[k]], counts[k]);
  return {};
}

void weighted_count_sink::consume(std::span<const index_pair> pairs) {
  for (const index_pair& p : pairs) add(sums_[p.query], weights_[p.neighbor]);
}

void weighted_count_sink::consume_rows(const row_segment& rows) {
  EPSJOIN_ENSURE(rows.unordered && rows.offsets.empty() && rows.space == memory_space::host,
                 error, "weighted_count_sink: rows other than unordered pairs");
  for (std::size_t k = 0; k < rows.queries.size(); ++k) {
    const std::uint32_t i = rows.queries[k], j = rows.neighbors[k];
    add(sums_[i], weights_[j]);
    add(sums_[j], weights_[i]);
  }
}

void core_merge_sink::consume(std::span<const index_pair> pairs) {
  if (pairs.size() < split_batch_pairs || threads_ <= 1) {
    merge(pairs);
    return;
  }
  parallel_for(threads_, pairs.size(), std::size_t{1} << 16,
               [&](std::size_t b, std::size_t e, unsigned) { merge(pairs.subspan(b, e - b)); });
}

void core_merge_sink::consume_rows(const row_segment& rows) {
  EPSJOIN_ENSURE(rows.unordered && rows.offsets.empty() && rows.space == memory_space::host,
                 error, "core_merge_sink: rows other than unordered pairs");
  const std::span<const std::uint32_t> is = rows.queries, js = rows.neighbors;
  if (is.size() < split_batch_pairs || threads_ <= 1) {
    merge_unordered(is, js);
    return;
  }
  parallel_for(threads_, is.size(), std::size_t{1} << 16,
               [&](std::size_t b, std::size_t e, unsigned) {
                 merge_unordered(is.subspan(b, e - b), js.subspan(b, e - b));
               });
}

void core_merge_sink::merge(std::span<const index_pair> pairs) const {
  // The neighbours' entries are fetched this many pairs ahead: the loop is bound by their cache
  // misses (a join's neighbour ids jump around memory), not by its arithmetic. One entry says
  // both whether the neighbour is core and where its find starts.
  constexpr std::size_t ahead = 16;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    if (k + ahead < pairs.size()) sets_.prefetch(pairs[k + ahead].neighbor);
    const index_pair& p = pairs[k];
    if (!sets_.is_member(p.query)) continue;
    if (!sets_.is_member(p.neighbor)) {
      lower_to(min_core_[p.neighbor], p.query);
    } else if (p.query < p.neighbor) {
      sets_.unite(p.query, p.neighbor);
    }
  }
}

void core_merge_sink::merge_unordered(std::span<const std::uint32_t> is,
                                      std::span<const std::uint32_t> js) const {
  constexpr std::size_t ahead = 16;
  for (std::size_t k = 0; k < is.size(); ++k) {
    if (k + ahead < is.size()) {
      sets_.prefetch(is[k + ahead]);
      sets_.prefetch(js[k + ahead]);
    }
    const std::uint32_t i = is[k], j = js[k];
    const bool i_core = sets_.is_member(i), j_core = sets_.is_member(j);
    if (i_core && j_core) {
      sets_.unite(i, j);
    } else if (i_core) {
      lower_to(min_core_[j], i);
    } else if (j_core) {
      lower_to(min_core_[i], j);
    }
  }
}

}  // namespace epsjoin::detail
