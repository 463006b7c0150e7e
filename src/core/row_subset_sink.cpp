#include "core/row_subset_sink.hpp"

#include <algorithm>
#include <atomic>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

row_subset_sink::row_subset_sink(result_sink& out, std::span<const std::uint32_t> query_ids,
                                 std::size_t own, std::span<const std::uint32_t> data_ids,
                                 options how)
    : out_(out), query_ids_(query_ids), own_(own), data_ids_(data_ids), how_(how) {}

void row_subset_sink::begin(const sink_info& info) {
  if (!how_.standalone) return;
  // To `out` this is a join of the own points against all: no pair is found twice. Its points
  // are the own ones, a prefix of the queries (a table's distances are computed from them).
  dataset_view own_points = info.queries;
  own_points.n = std::min(own_points.n, own_);
  out_.begin({.n_queries = own_, .n_data = info.n_data, .self_join = false,
              .include_self = false, .queries = own_points, .data = info.data});
}

void row_subset_sink::finish() {
  if (!how_.standalone) return;
  if (has_rows()) {
    if (handed_pairs()) {
      hand_rows_on_as_pairs();
    } else {
      lay_out_alone();
    }
  }
  out_.finish();
}

void row_subset_sink::consume(std::span<const index_pair> pairs) {
  std::vector<index_pair> mapped;
  mapped.reserve(pairs.size());
  for (const index_pair& p : pairs) {
    if (p.query < own_) mapped.push_back({query_id(p.query), data_id(p.neighbor)});
  }
  hand_on(mapped);
}

void row_subset_sink::consume_rows(const row_segment& rows) {
  EPSJOIN_ENSURE(rows.unordered && rows.offsets.empty() && rows.space == memory_space::host,
                 error, "internal: a shard's rows other than unordered pairs");
  std::vector<std::uint32_t> firsts, seconds;
  firsts.reserve(rows.queries.size());
  seconds.reserve(rows.queries.size());
  for (std::size_t k = 0; k < rows.queries.size(); ++k) {
    const std::uint32_t i = rows.queries[k], j = rows.neighbors[k];
    const bool first_own = i < own_, second_own = j < own_;
    if (!first_own && !second_own) continue;
    const std::uint32_t a = query_id(i), b = query_id(j);
    // Both own: found here only. One own: found on the other point's shard too.
    const std::uint32_t own_id = first_own ? a : b, other_id = first_own ? b : a;
    if ((first_own && second_own) || own_id < other_id) {
      firsts.push_back(std::min(a, b));
      seconds.push_back(std::max(a, b));
    }
  }
  pairs_.fetch_add(2 * firsts.size(), std::memory_order_relaxed);
  if (firsts.empty()) return;
  handed_pairs_.store(true, std::memory_order_relaxed);
  out_.consume_rows({.queries = firsts, .neighbors = seconds, .unordered = true});
}

row_destination row_subset_sink::consume_counts(const count_batch& batch) {
  if (batch.rows != row_delivery::none) {
    EPSJOIN_ENSURE(batch.rows == row_delivery::in_place, error,
                   "internal: a shard's rows delivered other than in place");
    return begin_rows(batch.counts);
  }
  if (batch.total > 0) {
    pairs_.fetch_add(batch.total, std::memory_order_relaxed);
    hand_total(out_, batch.total);
  }
  hand_counts_on(batch.queries, batch.counts);
  return {};
}

void row_subset_sink::hand_counts_on(std::span<const std::uint32_t> queries,
                                     std::span<const std::uint32_t> counts) {
  // A chunk at a time on the sink's threads, each chunk's own rows mapped into small buffers and
  // handed on (every sink takes concurrent calls): an engine delivers all its rows' counts in
  // one call, and two arrays of that size filled on one thread took 0.3-2 s a device at 100M
  // rows, longer than the count kernels it follows.
  constexpr std::size_t chunk = std::size_t{1} << 16;
  std::atomic<std::uint64_t> sum{0};
  parallel_for(how_.threads, queries.size(), chunk, [&](std::size_t begin, std::size_t end, unsigned) {
    std::vector<std::uint32_t> ids, kept;
    ids.reserve(end - begin);
    kept.reserve(end - begin);
    std::uint64_t mine = 0;
    for (std::size_t k = begin; k < end; ++k) {
      if (queries[k] >= own_) continue;
      ids.push_back(query_id(queries[k]));
      kept.push_back(counts[k]);
      mine += counts[k];
    }
    sum.fetch_add(mine, std::memory_order_relaxed);
    if (!ids.empty()) hand_counts(out_, ids, kept);
  });
  pairs_.fetch_add(sum.load(), std::memory_order_relaxed);
}

sink_request row_subset_sink::request() const {
  const sink_request out = out_.request();
  sink_request own{.keeps_result_in_memory = out.keeps_result_in_memory,
                   .bytes_kept_per_pair = out.bytes_kept_per_pair,
                   .bytes_added_per_pair = out.bytes_added_per_pair};
  if (out.counts_only()) {
    // Only the total of all the caller's queries maps to a total of the own points: ids below
    // another bound are scattered through the own points.
    const bool whole_total = out.form == result_form::total && out.total_below == SIZE_MAX;
    own.form = whole_total ? result_form::total : result_form::counts;
    own.total_below = whole_total ? own_ : SIZE_MAX;
    return own;
  }
  own.form = how_.unordered && out.unordered_pairs() ? result_form::unique_pairs
             : out.rows_in_place                      ? result_form::table
                                                      : result_form::pairs;
  own.rows_in_place = out.rows_in_place;
  return own;
}

row_destination row_subset_sink::begin_rows(std::span<const std::uint32_t> counts) {
  EPSJOIN_ENSURE(budget_ != nullptr, error, "internal: a row subset without a memory budget");
  if (how_.table != nullptr) return place_in_table(counts);
  rows_.offsets.resize(counts.size() + 1);
  rows_.offsets[0] = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    rows_.offsets[q + 1] = rows_.offsets[q] + counts[q];
  }
  const std::uint64_t bytes = rows_.offsets.size() * sizeof(std::uint64_t) +
                              rows_.offsets.back() * sizeof(std::uint32_t);
  // Twice: the local rows here, and then the own rows' places in the caller's table.
  budget_->require_host(2 * bytes, "a shard's rows before they reach the neighbour table");
  rows_.neighbors.resize(rows_.offsets.back());
  return {rows_.neighbors.data(), rows_.offsets.data()};
}

void row_subset_sink::copy_row(std::size_t a, std::uint32_t* to) const {
  for (std::uint64_t k = rows_.offsets[a]; k < rows_.offsets[a + 1]; ++k) {
    *to++ = data_id(rows_.neighbors[k]);
  }
}

void row_subset_sink::hand_rows_on_as_pairs() {
  std::vector<index_pair> batch;
  for (std::size_t a = 0; a < own_ && has_rows(); ++a) {
    for (std::uint64_t k = rows_.offsets[a]; k < rows_.offsets[a + 1]; ++k) {
      batch.push_back({query_id(static_cast<std::uint32_t>(a)), data_id(rows_.neighbors[k])});
    }
    if (batch.size() >= (std::size_t{1} << 16) || a + 1 == own_) {
      hand_on(batch);
      batch.clear();
    }
  }
  rows_ = neighbor_table();
}

void row_subset_sink::rows_delivered() {
  std::uint64_t sum = 0;
  for (std::size_t a = 0; a < own_ && has_rows(); ++a) sum += row_length(a);
  pairs_.fetch_add(sum, std::memory_order_relaxed);
  rows_ = neighbor_table();
}

void row_subset_sink::hand_on(std::span<const index_pair> pairs) {
  pairs_.fetch_add(pairs.size(), std::memory_order_relaxed);
  if (pairs.empty()) return;
  handed_pairs_.store(true, std::memory_order_relaxed);
  out_.consume(pairs);
}

void row_subset_sink::lay_out_alone() {
  std::vector<std::uint32_t> counts(own_);
  for (std::size_t a = 0; a < own_; ++a) counts[a] = row_length(a);
  const row_destination dest = lay_out_rows(out_, counts);
  parallel_for(how_.threads, own_, std::size_t{1} << 12, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t a = b; a < e; ++a) copy_row(a, dest.row(a));
  });
  rows_delivered();
}

row_destination row_subset_sink::place_in_table(std::span<const std::uint32_t> counts) {
  EPSJOIN_ENSURE(counts.size() >= own_, error, "internal: ", counts.size(), " rows for ", own_,
                 " own queries");
  std::uint64_t halo_ids = 0;
  for (std::size_t a = own_; a < counts.size(); ++a) halo_ids += counts[a];
  budget_->require_host(counts.size() * sizeof(std::uint64_t) + halo_ids * sizeof(std::uint32_t) +
                            own_ * sizeof(std::uint32_t),
                        "a device's row places in the neighbour table and its halo's rows");
  own_counts_.assign(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(own_));
  arrived_ = true;
  const row_destination table =
      how_.table->arrive_with_rows(query_ids_.first(own_), own_counts_, how_.threads);
  EPSJOIN_ENSURE(table.one_array(), error, "internal: a caller's table in two arrays");
  place_starts_.resize(counts.size());
  parallel_for(how_.threads, own_, std::size_t{1} << 16, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t a = b; a < e; ++a) place_starts_[a] = table.starts[query_ids_[a]];
  });
  std::uint64_t next = 0;
  for (std::size_t a = own_; a < counts.size(); ++a) {
    place_starts_[a] = next;
    next += counts[a];
  }
  halo_rows_.resize(next);
  placed_ = {table.neighbors, place_starts_.data(), halo_rows_.data(), own_};
  return placed_;
}

void row_subset_sink::finish_in_place(bool ids_written) {
  if (how_.table == nullptr) return;
  if (!arrived_) {
    arrived_ = true;
    how_.table->arrive_without_rows();
    return;
  }
  if (placed_.neighbors == nullptr) return;
  std::uint64_t sum = 0;
  for (const std::uint32_t c : own_counts_) sum += c;
  pairs_.fetch_add(sum, std::memory_order_relaxed);
  if (!data_ids_.empty() && !ids_written) {
    parallel_for(how_.threads, own_, std::size_t{1} << 12,
                 [&](std::size_t b, std::size_t e, unsigned) {
                   for (std::size_t a = b; a < e; ++a) {
                     std::uint32_t* row = placed_.row(a);
                     for (std::uint32_t k = 0; k < own_counts_[a]; ++k) row[k] = data_id(row[k]);
                   }
                 });
  }
  place_starts_ = {};
  halo_rows_ = {};
  own_counts_ = {};
  placed_ = {};
}

}  // namespace epsjoin::detail
