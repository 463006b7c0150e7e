#include "core/range_rows.hpp"

#include <algorithm>
#include <atomic>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

namespace {

// Held rows go out in blocks of about this many ids, as the GPU engines' ring slots would.
constexpr std::size_t held_block_ids = std::size_t{1} << 22;

}  // namespace

range_table::range_table(result_sink& out, std::vector<std::size_t> firsts)
    : out_(out),
      firsts_(std::move(firsts)),
      counts_(firsts_.back(), 0),
      run_pairs_(runs(), 0),
      run_starts_(runs(), 0),
      arrivals_(runs()) {}

range_table::placed_run range_table::arrive(std::size_t run,
                                            std::span<const std::uint32_t> engine_counts,
                                            std::uint32_t own, unsigned threads) {
  EPSJOIN_ENSURE(engine_counts.size() == queries(run), error, "internal: ", engine_counts.size(),
                 " counts for a run of ", queries(run), " queries");
  std::uint32_t* const mine = counts_.data() + first_query(run);
  std::atomic<std::uint64_t> pairs{0};
  parallel_for(threads, engine_counts.size(), std::size_t{1} << 16,
               [&](std::size_t b, std::size_t e, unsigned) {
                 std::uint64_t part = 0;
                 for (std::size_t q = b; q < e; ++q) {
                   EPSJOIN_ENSURE(engine_counts[q] >= own, error, "internal: point ",
                                  first_query(run) + q,
                                  " is not its own neighbour in its device's run of the table");
                   part += mine[q] = engine_counts[q] - own;
                 }
                 pairs.fetch_add(part, std::memory_order_relaxed);
               });
  run_pairs_[run] = pairs.load();  // its own slot: read by the last to arrive, under the lock
  arrivals_.arrive(
      [&] {
        begin_row_blocks(out_, counts_);
        std::uint64_t start = 0;
        for (std::size_t g = 0; g < runs(); ++g) {
          run_starts_[g] = start;
          start += run_pairs_[g];
        }
        counts_ = {};
      },
      true);
  return {run_starts_[run], run_pairs_[run]};
}

void range_table::abandon() noexcept { arrivals_.abandon(); }

range_rows_sink::range_rows_sink(range_table& table, std::size_t run, std::size_t n_data,
                                 bool self_join, unsigned threads)
    : table_(table),
      run_(run),
      first_query_(table.first_query(run)),
      self_join_(self_join),
      threads_(std::max(1u, threads)) {
  held_.begin({.n_queries = table.queries(run), .n_data = n_data, .self_join = false});
}

void range_rows_sink::consume(std::span<const index_pair> pairs) {
  held_.consume(pairs);
  holds_rows_ = true;
}

row_destination range_rows_sink::consume_counts(const count_batch& batch) {
  EPSJOIN_ENSURE(batch.rows != row_delivery::none && batch.queries.empty(), error,
                 "internal: a device's run of the table got counts without rows");
  if (batch.rows == row_delivery::blocks) {
    arrive_with(batch.counts);
    return {};
  }
  std::uint64_t ids = 0;
  for (const std::uint32_t c : batch.counts) ids += c;
  if (budget_ != nullptr) {
    budget_->require_host((batch.counts.size() + 1) * sizeof(std::uint64_t) +
                           ids * sizeof(std::uint32_t),
                          "a device's rows, held until they are written");
  }
  holds_rows_ = true;
  return held_.consume_counts(batch);
}

void range_rows_sink::consume_rows(const row_segment& rows) {
  EPSJOIN_ENSURE(arrived_ && rows.space == memory_space::host && rows.queries.empty() &&
                     !rows.offsets.empty(),
                 error, "internal: a device's run of the table got rows other than blocks");
  hand_on(rows.first_query, rows.offsets, rows.neighbors);
}

void range_rows_sink::finish() {
  if (holds_rows_) {
    held_.finish();
    hand_on_held_rows();
  } else if (!arrived_) {
    // The engine ran on no query or no data point (multi_device_join skips it then): empty rows.
    EPSJOIN_ENSURE(!self_join_ || table_.queries(run_) == 0, error,
                   "internal: a device's run of a self-join delivered no rows");
    arrive_with(std::vector<std::uint32_t>(table_.queries(run_), 0));
  }
}

void range_rows_sink::arrive_with(std::span<const std::uint32_t> engine_counts) {
  EPSJOIN_ENSURE(!arrived_, error, "internal: a device's run of the table counted twice");
  arrived_ = true;
  placed_ = table_.arrive(run_, engine_counts, self_join_ ? 1 : 0, threads_);
}

void range_rows_sink::hand_on(std::size_t first, std::span<const std::uint64_t> offsets,
                              std::span<const std::uint32_t> neighbors) {
  const std::size_t rows = offsets.size() - 1;
  // Each row loses its own point in a self-join: row r moves back by the first + r points
  // before it.
  const std::uint64_t own = self_join_ ? 1 : 0;
  block_places_.resize(offsets.size());
  for (std::size_t r = 0; r <= rows; ++r) {
    block_places_[r] = placed_.start + offsets[r] - own * (first + r);
  }
  if (!self_join_) {
    hand_row_block(table_.out(), first_query_ + first, block_places_, neighbors);
    return;
  }
  EPSJOIN_ENSURE(neighbors.size() >= rows, error, "internal: a block of ", rows, " rows holds only ",
                 neighbors.size(), " neighbours, short of each row's own point");
  // On the device's threads: one thread copying every id of a 5 GB run took most of its 5 s.
  block_ids_.resize(neighbors.size() - rows);
  parallel_for(threads_, rows, std::size_t{1} << 12, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t r = b; r < e; ++r) {
      const auto query = static_cast<std::uint32_t>(first_query_ + first + r);
      const auto row_begin = neighbors.begin() + static_cast<std::ptrdiff_t>(offsets[r] - offsets[0]);
      const auto row_end = neighbors.begin() + static_cast<std::ptrdiff_t>(offsets[r + 1] - offsets[0]);
      const auto at = std::find(row_begin, row_end, query);
      EPSJOIN_ENSURE(at != row_end, error, "internal: point ", query,
                     " is not its own neighbour in its device's run of the table");
      std::uint32_t* to = block_ids_.data() + (block_places_[r] - block_places_[0]);
      to = std::copy(row_begin, at, to);
      std::copy(at + 1, row_end, to);
    }
  });
  hand_row_block(table_.out(), first_query_ + first, block_places_, block_ids_);
}

void range_rows_sink::hand_on_held_rows() {
  const neighbor_table& held = held_.table();
  const std::size_t n = table_.queries(run_);
  std::vector<std::uint32_t> counts(n);
  for (std::size_t q = 0; q < n; ++q) {
    counts[q] = static_cast<std::uint32_t>(held.offsets[q + 1] - held.offsets[q]);
  }
  arrive_with(counts);
  for (std::size_t q = 0; q < n;) {
    std::size_t end = q + 1;
    while (end < n && held.offsets[end + 1] - held.offsets[q] <= held_block_ids) ++end;
    hand_on(q, {held.offsets.data() + q, end - q + 1},
            {held.neighbors.data() + held.offsets[q], held.offsets[end] - held.offsets[q]});
    q = end;
  }
  held_.release();
}

}  // namespace epsjoin::detail
