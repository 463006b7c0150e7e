// epsjoin.pairs: a join's unique pairs as an (m, 2) int64 array, written in place by the join's
// threads, grouped by i afterwards, or cut from the rows of a table (join_calls.hpp says when).

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include <epsjoin/epsjoin.hpp>

#include "join_calls.hpp"
#include "join_support.hpp"
#include "owned_array.hpp"
#include "placed_pairs.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

namespace {

/// The grouped or cut pairs' memory: not zeroed, in ordinary pages. (Measured on the 2-core
/// virtual machine, uniform 2-D 2M S 50, 800 MB of pairs: in the library's huge-page blocks the
/// page faults took most of epsjoin.pairs's time, about 2 s of 3.9; see bench/RESULTS.md, "Unique
/// pairs". The placed pairs, measured later on the same machine, were faster with huge pages
/// advised, 0.52 s against 0.64-0.67 s: placed_pairs.hpp. These were not measured again.)
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

/// A join's unique pairs: rows from the engines that fill rows (cut to their upper half
/// afterwards), or pairs, each unordered pair once, from a self-join that finds each pair once
/// (cpu-grid's halved patterns, super-ego) and from the engines that hand over pairs. The pairs
/// are written as int64 into `place` as they arrive when it is given, else collected in batches.
class upper_pairs_sink final : public epsjoin::result_sink {
 public:
  explicit upper_pairs_sink(placed_pairs* place = nullptr) : place_(place) {}
  void begin(const epsjoin::sink_info& info) override {
    keep_all_ = !info.self_join;
    keep_self_ = info.include_self;
    rows_ = false;
    batches_.clear();
    table_.begin(info);
  }
  /// Placed, the rows of the engines that stream them in blocks (the GPU engines) are cut into
  /// the placed pairs as they come, with no table in host memory. Per ordered pair the budget
  /// counts (a self-join keeps half of them): 8 bytes a kept pair while collected, none when
  /// placed, and 16 in the int64 result, whether placed, grouped or cut from rows.
  epsjoin::sink_request request() const override {
    const double kept = place_ != nullptr ? 0 : 8;
    return {.form = epsjoin::result_form::unique_pairs,
            .rows_in_place = true,
            .row_blocks = place_ != nullptr,
            .keeps_result_in_memory = true,
            .bytes_kept_per_pair = keep_all_ ? kept : kept / 2,
            .bytes_added_per_pair = keep_all_ ? 16.0 : 8.0};
  }
  epsjoin::row_destination consume_counts(const epsjoin::count_batch& counts) override {
    if (counts.rows == epsjoin::row_delivery::blocks) return {};
    rows_ = true;
    return table_.consume_counts(counts);
  }
  void consume_rows(const epsjoin::row_segment& rows) override {
    if (rows.unordered) return keep_unordered(rows.queries, rows.neighbors);
    const std::size_t first_query = rows.first_query;
    const std::span<const std::uint64_t> offsets = rows.offsets;
    const std::span<const std::uint32_t> neighbors = rows.neighbors;
    const auto row = [&](std::size_t r) {
      return neighbors.subspan(offsets[r] - offsets[0], offsets[r + 1] - offsets[r]);
    };
    const auto keep = [&](std::size_t q, std::uint32_t j) {
      return keep_all_ || j > q || (keep_self_ && j == q);
    };
    std::uint64_t n = 0;
    for (std::size_t r = 0; r + 1 < offsets.size(); ++r) {
      for (const std::uint32_t j : row(r)) n += keep(first_query + r, j);
    }
    if (n == 0) return;
    std::int64_t* out = place_->claim(n);
    for (std::size_t r = 0; r + 1 < offsets.size(); ++r) {
      const std::size_t q = first_query + r;
      for (const std::uint32_t j : row(r)) {
        if (!keep(q, j)) continue;
        *out++ = static_cast<std::int64_t>(q);
        *out++ = j;
      }
    }
  }
  void consume(std::span<const epsjoin::index_pair> pairs) override {
    const auto keep = [&](const epsjoin::index_pair& p) {
      return keep_all_ || p.query < p.neighbor || (keep_self_ && p.query == p.neighbor);
    };
    if (place_ != nullptr) {
      std::uint64_t n = 0;
      for (const epsjoin::index_pair& p : pairs) n += keep(p);
      if (n == 0) return;
      std::int64_t* out = place_->claim(n);
      for (const epsjoin::index_pair& p : pairs) {
        if (!keep(p)) continue;
        *out++ = p.query;
        *out++ = p.neighbor;
      }
      return;
    }
    std::vector<epsjoin::index_pair> kept;
    kept.reserve(keep_all_ ? pairs.size() : pairs.size() / 2 + 1);
    for (const epsjoin::index_pair& p : pairs) {
      if (keep(p)) kept.push_back(p);
    }
    add(std::move(kept));
  }
  void keep_unordered(std::span<const std::uint32_t> is, std::span<const std::uint32_t> js) {
    if (place_ == nullptr) {
      std::vector<epsjoin::index_pair> pairs(is.size());
      for (std::size_t k = 0; k < is.size(); ++k) pairs[k] = {is[k], js[k]};
      return add(std::move(pairs));
    }
    if (is.empty()) return;
    std::int64_t* out = place_->claim(is.size());
    for (std::size_t k = 0; k < is.size(); ++k) {
      *out++ = is[k];
      *out++ = js[k];
    }
  }
  void finish() override {
    if (rows_) table_.finish();
  }
  /// True when the rows were filled (the pairs are then cut from table()).
  bool rows_delivered() const noexcept { return rows_; }
  const epsjoin::neighbor_table& table() const noexcept { return table_.table(); }
  /// The collected pairs, handed over (pairs form).
  std::vector<std::vector<epsjoin::index_pair>> release_batches() noexcept { return std::move(batches_); }

 private:
  void add(std::vector<epsjoin::index_pair> batch) {
    if (batch.empty()) return;
    std::lock_guard lock(mutex_);
    batches_.push_back(std::move(batch));
  }
  placed_pairs* place_;
  bool keep_all_ = false, keep_self_ = false, rows_ = false;
  epsjoin::csr_sink table_{false};
  std::mutex mutex_;
  std::vector<std::vector<epsjoin::index_pair>> batches_;
};

/// The rows of a self-join's table cut to j > i (j >= i with self pairs), every (i, j) of an
/// A x B join, as int64 pairs in row order; each row sorted by j when `sort`.
void cut_rows(const epsjoin::neighbor_table& t, bool upper, bool include_self, bool sort,
              unsigned threads, pairs_vector& pairs) {
  const std::size_t n = t.n_queries();
  auto kept = [&](std::size_t i, std::uint32_t j) { return !upper || j > i || (j == i && include_self); };
  std::vector<std::uint64_t> start(n + 1, 0);  // where row i's pairs begin in the output
  for_row_blocks(n, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      std::uint64_t m = 0;
      for (const std::uint32_t j : t.row(i)) m += kept(i, j);
      start[i + 1] = m;
    }
  });
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  pairs.resize(2 * start[n]);
  std::int64_t* out = pairs.data();
  for_row_blocks(n, threads, [&](std::size_t begin, std::size_t end) {
    std::vector<std::uint32_t> row;
    for (std::size_t i = begin; i < end; ++i) {
      row.clear();
      for (const std::uint32_t j : t.row(i)) {
        if (kept(i, j)) row.push_back(j);
      }
      if (sort) std::sort(row.begin(), row.end());  // only the kept half of the row
      std::int64_t* at = out + 2 * start[i];
      for (const std::uint32_t j : row) {
        *at++ = static_cast<std::int64_t>(i);
        *at++ = j;
      }
    }
  });
}

/// Collected pairs into int64 pairs grouped by i, each row sorted by j when `sort`. A counting
/// sort in two levels, so that no pass misses the cache on every pair: the pairs are first
/// partitioned into buckets of about 2^11 consecutive i (one streaming write per bucket), then
/// each bucket is counting-sorted by i into its place in the result with counts that stay in
/// cache. (One level, a count and a cursor per i, took 2 s for 50M pairs of uniform 2-D data on
/// one thread: each pair a cache miss in both passes.) The partitioned pairs (8 bytes) lie in
/// the back half of the result (16 bytes a pair), so no more fresh memory is touched than the
/// result: bucket b's output ends where bucket b + 1's input begins, and each bucket's input is
/// copied out before its output is written. The batches are freed on the way. One thread: the
/// passes are bound by memory, and the buckets must go in order.
void group_pairs(std::vector<std::vector<epsjoin::index_pair>> batches, std::size_t n, bool sort,
                 pairs_vector& pairs) {
  if (n == 0) return;
  pass_interrupts interrupts;
  const unsigned shift = std::max(static_cast<unsigned>(std::bit_width(n - 1)), 11u) - 11u;
  const std::size_t n_buckets = ((n - 1) >> shift) + 1;
  std::vector<std::uint64_t> bucket_at(n_buckets + 1, 0);
  for (const auto& batch : batches) {
    for (const epsjoin::index_pair& p : batch) ++bucket_at[(p.query >> shift) + 1];
  }
  for (std::size_t b = 0; b < n_buckets; ++b) bucket_at[b + 1] += bucket_at[b];
  const std::uint64_t total = bucket_at[n_buckets];
  pairs.resize(2 * total);
  static_assert(sizeof(epsjoin::index_pair) == sizeof(std::int64_t));
  auto* bucketed = reinterpret_cast<epsjoin::index_pair*>(pairs.data() + total);
  {
    std::vector<std::uint64_t> cursor(bucket_at.begin(), bucket_at.end() - 1);
    for (auto& batch : batches) {
      for (const epsjoin::index_pair& p : batch) bucketed[cursor[p.query >> shift]++] = p;
      batch = {};
    }
  }
  struct row_pair {
    std::int64_t i, j;
  };
  static_assert(sizeof(row_pair) == 2 * sizeof(std::int64_t));
  auto* out = reinterpret_cast<row_pair*>(pairs.data());
  std::vector<std::uint64_t> at;
  std::vector<epsjoin::index_pair> in;
  for (std::size_t b = 0; b < n_buckets; ++b) {
    interrupts.poll();
    const std::size_t lo = b << shift, ids = std::min(n, (b + 1) << shift) - lo;
    in.assign(bucketed + bucket_at[b], bucketed + bucket_at[b + 1]);
    at.assign(ids + 1, 0);
    for (const epsjoin::index_pair& p : in) ++at[p.query - lo + 1];
    at[0] = bucket_at[b];
    for (std::size_t k = 0; k < ids; ++k) at[k + 1] += at[k];
    for (const epsjoin::index_pair& p : in) {
      out[at[p.query - lo]++] = {static_cast<std::int64_t>(p.query), p.neighbor};
    }
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

nb::tuple pairs_from_rows(points_array queries, std::optional<points_array> data, double eps,
                          bool include_self, bool sort, const run_settings& settings, bool once) {
  // Unsorted, the pairs of an engine that hands pairs over are written in place by the join's
  // threads (placed_pairs.hpp). Sorted, they are grouped by i afterwards on one thread: measured
  // faster than the rows' cut only for a join on one thread (bench/RESULTS.md, "Unique pairs
  // computed once"); on several, the rows are filled and cut on every thread.
  std::unique_ptr<placed_pairs> placed;
  if (once && !sort) {
    placed = placed_pairs::reserve(placed_pairs::budget_bytes(settings.host_memory_bytes) / 16);
  }
  once = once && (placed != nullptr || settings.threads == 1);
  upper_pairs_sink once_sink(placed.get());
  // Rows sorted after the cut, half the work. The cut: 16 bytes a kept pair, half the ordered
  // pairs of a self-join.
  epsjoin::csr_sink rows_sink(false, data.has_value() ? 16 : 8);
  epsjoin::result_sink& sink = once ? static_cast<epsjoin::result_sink&>(once_sink) : rows_sink;
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  auto pairs = std::make_unique<pairs_vector>();
  released_pass([&] {
    const bool upper = !data.has_value();
    if (!once) {
      cut_rows(rows_sink.table(), upper, include_self, sort, settings.threads, *pairs);
    } else if (once_sink.rows_delivered()) {
      cut_rows(once_sink.table(), upper, include_self, sort, settings.threads, *pairs);
    } else if (placed != nullptr) {
      placed->trim();
    } else {
      group_pairs(once_sink.release_batches(), queries.shape(0), sort, *pairs);
    }
  });
  if (placed != nullptr && !once_sink.rows_delivered()) {
    const std::size_t m = placed->size();
    std::int64_t* p = placed->data();
    return nb::make_tuple(numpy_view(p, {m, 2}, owner_of(std::move(placed))), stats_dict(stats));
  }
  const std::size_t m = pairs->size() / 2;
  std::int64_t* p = pairs->data();
  return nb::make_tuple(numpy_view(p, {m, 2}, owner_of(std::move(pairs))), stats_dict(stats));
}

}  // namespace epsjoin_python
