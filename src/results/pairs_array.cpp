// A join's pairs as one int64 array (pairs_array_sink): written in place by the join's threads,
// collected and grouped by i, or cut from a table's rows, as the header says when.

#include "epsjoin/pairs_array.hpp"

#include <algorithm>
#include <bit>
#include <thread>
#include <utility>

#include "base/cancellation.hpp"
#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "results/placed_pairs.hpp"

namespace epsjoin {

namespace {

/// The grouped or cut pairs' memory: not zeroed, in ordinary pages. (Measured on the 2-core
/// virtual machine, uniform 2-D 2M S 50, 800 MB of pairs: in the library's huge-page blocks the
/// page faults took most of the pairs' time, about 2 s of 3.9; bench/RESULTS.md, "Unique pairs".
/// The placed pairs were faster with huge pages advised: placed_pairs.hpp.)
template <class T>
struct plain_default_init : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  struct rebind {
    using other = plain_default_init<U>;
  };
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using pairs_vector = std::vector<std::int64_t, plain_default_init<std::int64_t>>;

class vector_pairs final : public pairs_array {
 public:
  pairs_vector values;
  std::int64_t* data() noexcept override { return values.data(); }
  std::size_t size() const noexcept override { return values.size() / 2; }
};

class placed_result final : public pairs_array {
 public:
  explicit placed_result(std::unique_ptr<detail::placed_pairs> placed) : placed_(std::move(placed)) {}
  std::int64_t* data() noexcept override { return placed_->data(); }
  std::size_t size() const noexcept override { return placed_->size(); }

 private:
  std::unique_ptr<detail::placed_pairs> placed_;
};

unsigned threads_or_all(unsigned threads) {
  return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

/// The rows of a table as pairs in row order, only those `kept` says; each row sorted by j when
/// `sort` (only its kept part: half the work of sorting the rows first).
template <class Kept>
void cut_rows(const neighbor_table& t, Kept&& kept, bool sort, unsigned threads,
              pairs_vector& pairs) {
  const std::size_t n = t.n_queries();
  std::vector<std::uint64_t> start(n + 1, 0);  // where row i's pairs begin in the output
  detail::parallel_for(threads, n, std::size_t{1} << 14, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      std::uint64_t m = 0;
      for (const std::uint32_t j : t.row(i)) m += kept(i, j);
      start[i + 1] = m;
    }
  });
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  pairs.resize(2 * start[n]);
  std::int64_t* out = pairs.data();
  detail::parallel_for(threads, n, std::size_t{1} << 14, [&](std::size_t b, std::size_t e, unsigned) {
    std::vector<std::uint32_t> row;
    for (std::size_t i = b; i < e; ++i) {
      row.clear();
      for (const std::uint32_t j : t.row(i)) {
        if (kept(i, j)) row.push_back(j);
      }
      if (sort) std::sort(row.begin(), row.end());
      std::int64_t* at = out + 2 * start[i];
      for (const std::uint32_t j : row) {
        *at++ = static_cast<std::int64_t>(i);
        *at++ = j;
      }
    }
  });
}

/// Collected pairs grouped by i, each group sorted by j when `sort`. A counting sort in two
/// levels, so that no pass misses the cache on every pair: the pairs are first partitioned into
/// buckets of about 2^11 consecutive i (one streaming write per bucket), then each bucket is
/// counting-sorted by i into its place with counts that stay in cache. (One level, a count and a
/// cursor per i, took 2 s for 50M pairs of uniform 2-D data on one thread: each pair a cache
/// miss in both passes.) The partitioned pairs (8 bytes) lie in the back half of the result (16
/// bytes a pair), so no more fresh memory is touched than the result: bucket b's output ends
/// where bucket b + 1's input begins, and each bucket's input is copied out before its output is
/// written. The batches are freed on the way. One thread: the passes are bound by memory.
void group_pairs(std::vector<std::vector<index_pair>> batches, std::size_t n, bool sort,
                 pairs_vector& pairs) {
  if (n == 0) return;
  const unsigned shift = std::max(static_cast<unsigned>(std::bit_width(n - 1)), 11u) - 11u;
  const std::size_t n_buckets = ((n - 1) >> shift) + 1;
  std::vector<std::uint64_t> bucket_at(n_buckets + 1, 0);
  for (const auto& batch : batches) {
    for (const index_pair& p : batch) ++bucket_at[(p.query >> shift) + 1];
  }
  for (std::size_t b = 0; b < n_buckets; ++b) bucket_at[b + 1] += bucket_at[b];
  const std::uint64_t total = bucket_at[n_buckets];
  pairs.resize(2 * total);
  static_assert(sizeof(index_pair) == sizeof(std::int64_t));
  auto* bucketed = reinterpret_cast<index_pair*>(pairs.data() + total);
  {
    std::vector<std::uint64_t> cursor(bucket_at.begin(), bucket_at.end() - 1);
    for (auto& batch : batches) {
      for (const index_pair& p : batch) bucketed[cursor[p.query >> shift]++] = p;
      batch = {};
    }
  }
  struct row_pair {
    std::int64_t i, j;
  };
  static_assert(sizeof(row_pair) == 2 * sizeof(std::int64_t));
  auto* out = reinterpret_cast<row_pair*>(pairs.data());
  std::vector<std::uint64_t> at;
  std::vector<index_pair> in;
  for (std::size_t b = 0; b < n_buckets; ++b) {
    detail::cancellation_point();
    const std::size_t lo = b << shift, ids = std::min(n, (b + 1) << shift) - lo;
    in.assign(bucketed + bucket_at[b], bucketed + bucket_at[b + 1]);
    at.assign(ids + 1, 0);
    for (const index_pair& p : in) ++at[p.query - lo + 1];
    at[0] = bucket_at[b];
    for (std::size_t k = 0; k < ids; ++k) at[k + 1] += at[k];
    for (const index_pair& p : in) out[at[p.query - lo]++] = {static_cast<std::int64_t>(p.query), p.neighbor};
    if (!sort) continue;
    // at[k] is now where row lo + k ends.
    std::uint64_t row_begin = bucket_at[b];
    for (std::size_t k = 0; k < ids; ++k) {
      std::sort(out + row_begin, out + at[k],
                [](const row_pair& x, const row_pair& y) { return x.j < y.j; });
      row_begin = at[k];
    }
  }
}

}  // namespace

pairs_array_sink::pairs_array_sink(const options& how)
    : sort_(how.sort),
      threads_(threads_or_all(how.threads)),
      self_join_(how.self_join),
      // A self-join keeps one pair of two; the cut adds 16 bytes a kept pair to the table.
      table_(false, how.self_join ? 8 : 16) {
  // Unsorted, pairs go in place; sorted on one thread, or where the system refuses to reserve
  // the address space, they are collected (one thread) or the rows cut (several).
  if (how.pairs_once && !how.sort) {
    placed_ = detail::placed_pairs::reserve(detail::placed_pairs::budget_bytes(how.memory_limit) / 16);
  }
  collects_ = how.pairs_once && placed_ == nullptr && threads_ == 1;
}

pairs_array_sink::~pairs_array_sink() = default;

sink_request pairs_array_sink::request() const {
  if (placed_ == nullptr && !collects_) return table_.request();
  // Placed, the rows of engines that stream them in blocks (the GPU engines) are cut into the
  // placed pairs as they come, with no table in host memory. Per ordered pair the budget counts
  // (a self-join keeps half of them): 8 bytes a kept pair while collected, none when placed,
  // and 16 in the result.
  const double kept = placed_ != nullptr ? 0 : 8;
  return {.form = result_form::unique_pairs,
          .rows_in_place = true,
          .row_blocks = placed_ != nullptr,
          .keeps_result_in_memory = true,
          .bytes_kept_per_pair = self_join_ ? kept / 2 : kept,
          .bytes_added_per_pair = self_join_ ? 8.0 : 16.0};
}

void pairs_array_sink::begin(const sink_info& info) {
  EPSJOIN_EXPECTS(info.self_join == self_join_, "pairs_array_sink made for ",
                  self_join_ ? "a self-join" : "an A x B join", " was given ",
                  info.self_join ? "a self-join" : "an A x B join");
  include_self_ = info.include_self;
  n_queries_ = info.n_queries;
  rows_ = false;
  batches_.clear();
  result_.reset();
  table_.begin(info);
}

row_destination pairs_array_sink::consume_counts(const count_batch& counts) {
  if (counts.rows == row_delivery::blocks) return {};
  rows_ = true;
  return table_.consume_counts(counts);
}

void pairs_array_sink::consume_rows(const row_segment& rows) {
  if (rows.unordered) return place(rows.queries, rows.neighbors);
  // Blocks of complete rows in query order (placed only): each row's kept part.
  std::uint64_t n = 0;
  for (std::size_t r = 0; r + 1 < rows.offsets.size(); ++r) {
    for (std::uint64_t k = rows.offsets[r]; k < rows.offsets[r + 1]; ++k) {
      n += keep(static_cast<std::uint32_t>(rows.first_query + r), rows.neighbors[k - rows.offsets[0]]);
    }
  }
  if (n == 0) return;
  std::int64_t* out = placed_->claim(n);
  for (std::size_t r = 0; r + 1 < rows.offsets.size(); ++r) {
    const auto q = static_cast<std::uint32_t>(rows.first_query + r);
    for (std::uint64_t k = rows.offsets[r]; k < rows.offsets[r + 1]; ++k) {
      const std::uint32_t j = rows.neighbors[k - rows.offsets[0]];
      if (!keep(q, j)) continue;
      *out++ = q;
      *out++ = j;
    }
  }
}

void pairs_array_sink::consume(std::span<const index_pair> pairs) {
  if (placed_ == nullptr && !collects_) return table_.consume(pairs);
  if (placed_ != nullptr) {
    std::uint64_t n = 0;
    for (const index_pair& p : pairs) n += keep(p.query, p.neighbor);
    if (n == 0) return;
    std::int64_t* out = placed_->claim(n);
    for (const index_pair& p : pairs) {
      if (!keep(p.query, p.neighbor)) continue;
      *out++ = p.query;
      *out++ = p.neighbor;
    }
    return;
  }
  std::vector<index_pair> kept;
  kept.reserve(self_join_ ? pairs.size() / 2 + 1 : pairs.size());
  for (const index_pair& p : pairs) {
    if (keep(p.query, p.neighbor)) kept.push_back(p);
  }
  collect(std::move(kept));
}

void pairs_array_sink::place(std::span<const std::uint32_t> is, std::span<const std::uint32_t> js) {
  if (placed_ == nullptr) {
    std::vector<index_pair> pairs(is.size());
    for (std::size_t k = 0; k < is.size(); ++k) pairs[k] = {is[k], js[k]};
    return collect(std::move(pairs));
  }
  if (is.empty()) return;
  std::int64_t* out = placed_->claim(is.size());
  for (std::size_t k = 0; k < is.size(); ++k) {
    *out++ = is[k];
    *out++ = js[k];
  }
}

void pairs_array_sink::collect(std::vector<index_pair> batch) {
  if (batch.empty()) return;
  std::lock_guard lock(mutex_);
  batches_.push_back(std::move(batch));
}

void pairs_array_sink::finish() {
  if (rows_ || (placed_ == nullptr && !collects_)) {
    table_.finish();
    auto cut = std::make_unique<vector_pairs>();
    cut_rows(table_.table(), [&](std::size_t i, std::uint32_t j) {
      return keep(static_cast<std::uint32_t>(i), j);
    }, sort_, threads_, cut->values);
    (void)table_.release();  // the table's memory goes now
    result_ = std::move(cut);
  } else if (placed_ != nullptr) {
    placed_->trim();
    result_ = std::make_unique<placed_result>(std::move(placed_));
  } else {
    auto grouped = std::make_unique<vector_pairs>();
    group_pairs(std::move(batches_), n_queries_, sort_, grouped->values);
    batches_ = {};
    result_ = std::move(grouped);
  }
}

std::unique_ptr<pairs_array> pairs_array_sink::release() {
  EPSJOIN_EXPECTS(result_ != nullptr, "pairs_array_sink: no finished join to release");
  return std::move(result_);
}

}  // namespace epsjoin
