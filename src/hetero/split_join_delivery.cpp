// split_join's delivery: the rows its workers found, into the caller's row table or sink.

#include "hetero/split_join.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "hetero/partition.hpp"

namespace epsjoin::detail::hetero {

namespace {

template <class U>
using uninit_vector = std::vector<U, default_init_allocator<U>>;

template <class U>
void fill_parallel(uninit_vector<U>& v, U value, unsigned threads) {
  parallel_for(threads, v.size(), std::size_t{1} << 16,
               [&](std::size_t b, std::size_t e, unsigned) {
                 std::fill(v.data() + b, v.data() + e, value);
               });
}

}  // namespace
template <class T>
side_totals split_join<T>::cpu() const {
  side_totals c;
  c.items = n_items_ - gpu_items_;
  for (const cpu_rows& r : rows_) {
    c.queries += r.positions.size();
    c.candidates += r.candidates;
  }
  for (double end : worker_end_) c.seconds = std::max(c.seconds, end);
  return c;
}

template <class T>
bool split_join<T>::found_any() const {
  // Under halving every reverse hit is some row's own hit, so own hits tell.
  return std::any_of(rows_.begin(), rows_.end(),
                     [](const cpu_rows& r) { return !r.neighbors.empty(); });
}

template <class T>
std::vector<std::uint32_t> split_join<T>::counts_by_position(std::uint32_t positions) const {
  EPSJOIN_EXPECTS(!delivered_, "the CPU's counts are asked for before its rows are delivered");
  std::vector<std::uint32_t> counts(positions, 0);
  if (view_.halving) {
    EPSJOIN_EXPECTS(reverse_counts_.size() == positions, "halving counts cover ",
                    reverse_counts_.size(), " positions, asked for ", positions);
    counts = reverse_counts_;
  }
  for (const cpu_rows& r : rows_) {
    for (std::size_t k = 0; k < r.positions.size(); ++k) counts[r.positions[k]] += r.counts[k];
  }
  return counts;
}

template <class T>
void split_join<T>::deliver_rows(const row_destination& dest,
                                std::span<const std::uint32_t> gpu_counts, unsigned threads) {
  EPSJOIN_EXPECTS(!delivered_, "the CPU's rows are delivered once");
  delivered_ = true;
  std::uint64_t cpu_hits = 0;
  for (const cpu_rows& r : rows_) cpu_hits += r.neighbors.size();
  if (cpu_hits == 0) return;  // no worker found anything (or none started)
  const std::span<const std::uint32_t> query_ids = view_.query_ids, data_ids = view_.data_ids;
  const std::size_t positions = query_ids.size();
  EPSJOIN_EXPECTS(gpu_counts.empty() || gpu_counts.size() == positions, "the GPU's parts cover ",
                  gpu_counts.size(), " rows of ", positions);
  // A row holds the GPU's part, then (halving) the hits other rows' queries found for it, then
  // the CPU's own hits, written whole by the worker that computed the row.
  auto cpu_part = [&](std::size_t p) {
    return dest.row(query_ids[p]) + (gpu_counts.empty() ? 0 : gpu_counts[p]);
  };
  // Where each of a worker's rows starts in its buffer, and the workers' rows cut into blocks
  // for one parallel loop (a loop per worker started threads 15 times over for a few rows each).
  constexpr std::size_t rows_per_block = 4096;
  std::vector<uninit_vector<std::uint64_t>> row_starts(rows_.size());
  struct block {
    std::size_t worker, begin, end;
  };
  std::vector<block> blocks;
  for (std::size_t w = 0; w < rows_.size(); ++w) {
    const std::size_t n = rows_[w].counts.size();
    row_starts[w].resize(n + 1);
    exclusive_scan(std::span<const std::uint32_t>(rows_[w].counts),
                   std::span<std::uint64_t>(row_starts[w]), threads);
    for (std::size_t b = 0; b < n; b += rows_per_block) {
      blocks.push_back({w, b, std::min(n, b + rows_per_block)});
    }
  }
  // Calls visit(p, hits of row p, count) for every row the CPU computed.
  auto for_each_row = [&](auto&& visit) {
    parallel_for(threads, blocks.size(), 1, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t i = b; i < e; ++i) {
        const cpu_rows& r = rows_[blocks[i].worker];
        const uninit_vector<std::uint64_t>& start = row_starts[blocks[i].worker];
        for (std::size_t k = blocks[i].begin; k < blocks[i].end; ++k) {
          visit(r.positions[k], r.neighbors.data() + start[k], r.counts[k]);
        }
      }
    });
  };
  for_each_row([&](std::uint32_t p, const std::uint32_t* found, std::uint32_t count) {
    std::uint32_t* row = cpu_part(p) + (view_.halving ? reverse_counts_[p] : 0);
    for (std::uint32_t n = 0; n < count; ++n) row[n] = data_ids[found[n]];
  });
  if (!view_.halving) return;

  // The reverse hits (one per own hit). When they are fewer than the rows, each is written
  // straight into its row, the reverse counts serving as cursors: the grouping below costs
  // several passes over every position, which took 9-33 ms at 6-8-D (2M positions) where the CPU
  // had found 12 thousand to 1.1 million hits (device run 11 of session 9).
  const bool direct = s_.delivery == reverse_delivery::direct ||
                      (s_.delivery == reverse_delivery::automatic && cpu_hits < positions);
  if (direct) {
    for_each_row([&](std::uint32_t p, const std::uint32_t* found, std::uint32_t count) {
      const std::uint32_t me = query_ids[p];
      for (std::uint32_t n = 0; n < count; ++n) {
        const std::uint32_t j = found[n];
        const std::uint32_t slot =
            std::atomic_ref(reverse_counts_[j]).fetch_sub(1, std::memory_order_relaxed) - 1;
        cpu_part(j)[slot] = me;
      }
    });
    return;
  }
  // Many hits: they are first grouped by position, then each row's group is copied whole. A
  // hit's row lies in a nearby cell, so in position order the scattered writes stay local; in the
  // caller's order (the table's) they do not: writing each hit straight into its row took 10 s
  // of 58 for the CPU side alone on Expo8D 2M at S 500.
  uninit_vector<std::uint64_t> group(positions + 1);
  exclusive_scan(std::span<const std::uint32_t>(reverse_counts_), std::span<std::uint64_t>(group),
                 threads);
  uninit_vector<std::uint32_t> reverse(group.back());
  uninit_vector<std::uint32_t> cursor(positions);
  fill_parallel(cursor, 0u, threads);
  for_each_row([&](std::uint32_t p, const std::uint32_t* found, std::uint32_t count) {
    const std::uint32_t me = query_ids[p];
    for (std::uint32_t n = 0; n < count; ++n) {
      const std::uint32_t j = found[n];
      const std::uint32_t at = std::atomic_ref(cursor[j]).fetch_add(1, std::memory_order_relaxed);
      reverse[group[j] + at] = me;
    }
  });
  parallel_for(threads, positions, 4096, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t p = b; p < e; ++p) {
      if (group[p + 1] == group[p]) continue;
      std::copy(reverse.begin() + static_cast<std::ptrdiff_t>(group[p]),
                reverse.begin() + static_cast<std::ptrdiff_t>(group[p + 1]), cpu_part(p));
    }
  });
}

template <class T>
void split_join<T>::deliver_pairs(result_sink& sink) const {
  constexpr std::size_t batch = std::size_t{1} << 20;
  std::vector<index_pair> pairs;
  pairs.reserve(batch);
  auto emit = [&](std::uint32_t a, std::uint32_t b) {
    pairs.push_back({a, b});
    if (pairs.size() == batch) {
      sink.consume(pairs);
      pairs.clear();
    }
  };
  for (const cpu_rows& r : rows_) {
    std::size_t next = 0;
    for (std::size_t k = 0; k < r.positions.size(); ++k) {
      const std::uint32_t q = view_.query_ids[r.positions[k]];
      for (std::uint32_t n = 0; n < r.counts[k]; ++n) {
        const std::uint32_t j = r.neighbors[next++];
        emit(q, view_.data_ids[j]);
        if (view_.halving) emit(view_.query_ids[j], q);
      }
    }
  }
  if (!pairs.empty()) sink.consume(pairs);
}

template side_totals split_join<float>::cpu() const;
template side_totals split_join<double>::cpu() const;
template bool split_join<float>::found_any() const;
template bool split_join<double>::found_any() const;
template std::vector<std::uint32_t> split_join<float>::counts_by_position(std::uint32_t positions) const;
template std::vector<std::uint32_t> split_join<double>::counts_by_position(std::uint32_t positions) const;
template void split_join<float>::deliver_rows(const row_destination& dest,
                                std::span<const std::uint32_t> gpu_counts, unsigned threads);
template void split_join<double>::deliver_rows(const row_destination& dest,
                                std::span<const std::uint32_t> gpu_counts, unsigned threads);
template void split_join<float>::deliver_pairs(result_sink& sink) const;
template void split_join<double>::deliver_pairs(result_sink& sink) const;

}  // namespace epsjoin::detail::hetero
