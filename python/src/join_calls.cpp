#include "join_calls.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include <epsjoin/epsjoin.hpp>

#include "owned_array.hpp"
#include "placed_pairs.hpp"
#include "released_call.hpp"
#include "stats_dict.hpp"

namespace epsjoin_python {

void set_geometry(const run_settings& s, epsjoin::join_options& options) {
  const auto metric = epsjoin::parse_metric(s.metric);
  if (!metric) {
    throw epsjoin::invalid_argument("metric must be 'euclidean', 'manhattan', 'chebyshev', "
                                    "'cosine' or 'haversine', got '" + s.metric + "'");
  }
  options.metric = *metric;
  if (s.angles != "radians" && s.angles != "degrees") {
    throw epsjoin::invalid_argument("angles must be 'radians' or 'degrees', got '" + s.angles + "'");
  }
  options.angles = s.angles == "degrees" ? epsjoin::angle_unit::degrees : epsjoin::angle_unit::radians;
  options.sphere_radius = s.sphere_radius;
  options.box = s.box;
}

namespace {

template <class Sink>
epsjoin::join_stats run_join(const points_array& queries, const std::optional<points_array>& data,
                             double eps, bool include_self, const run_settings& s, Sink& sink) {
  const epsjoin::dataset_view a = view_of(queries);
  if (!data) {
    return run_join_released(eps, include_self, s,
                             [&](epsjoin::resources& r, const epsjoin::join_options& o) {
                               return epsjoin::self_join(r, a, o, sink);
                             });
  }
  const epsjoin::dataset_view b = view_of(*data);
  check_same_dtype(a, b);
  return run_join_released(eps, include_self, s,
                           [&](epsjoin::resources& r, const epsjoin::join_options& o) {
                             return epsjoin::join(r, a, b, o, sink);
                           });
}

/// A CSR table that its caller turns into more arrays after the join (a graph's data array, the
/// pairs cut from it): the memory limit is checked for all of them before the table is
/// allocated (result_sink::bytes_added_per_pair).
class table_then_arrays_sink final : public epsjoin::result_sink {
 public:
  table_then_arrays_sink(epsjoin::csr_sink& table, double added_per_pair)
      : table_(table), added_per_pair_(added_per_pair) {}
  void begin(const epsjoin::sink_info& info) override { table_.begin(info); }
  void consume(std::span<const epsjoin::index_pair> pairs) override { table_.consume(pairs); }
  bool accepts_rows() const override { return true; }
  epsjoin::row_destination begin_rows(std::span<const std::uint32_t> counts) override {
    return table_.begin_rows(counts);
  }
  void finish() override { table_.finish(); }
  bool keeps_result_in_memory() const override { return true; }
  double bytes_kept_per_pair() const override { return table_.bytes_kept_per_pair(); }
  double bytes_added_per_pair() const override { return added_per_pair_; }

 private:
  epsjoin::csr_sink& table_;
  double added_per_pair_;
};

/// Results of gigabytes: not zeroed before they are written, in the library's huge-page blocks
/// (a page fault per 2 MiB, not per 4 KiB).
template <class T>
using output_vector = std::vector<T, epsjoin::default_init_allocator<T>>;

/// The pairs' memory: not zeroed, in ordinary pages. (Measured on the 2-core virtual machine,
/// uniform 2-D 2M S 50, 800 MB of pairs: in the library's huge-page blocks the page faults took
/// most of epsjoin.pairs's time, about 2 s of 3.9; see bench/RESULTS.md, "Unique pairs".)
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

/// Ctrl-C for the passes after a join (the join hears it through its progress callback): the
/// calling thread, Python's main one, asks at most ten times a second; `interrupted` then stops
/// every thread of the pass at its next piece of rows.
class pass_interrupts {
 public:
  /// Called by the calling thread between pieces; throws interrupted on Ctrl-C.
  void poll() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    try {
      check_(0.0);
    } catch (const interrupted&) {
      stop_.store(true, std::memory_order_relaxed);
      throw;
    }
  }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

 private:
  std::function<void(double)> check_ = interrupt_check();
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::atomic<bool> stop_{false};
};

/// fn(begin, end) over [0, n) in one contiguous block per thread (0: every hardware thread),
/// for the light per-row passes that turn a table into what Python wants; each block in pieces
/// of `piece` rows, between which Ctrl-C is heard (throws interrupted, all threads joined).
template <class Fn>
void for_row_blocks(std::size_t n, unsigned threads, Fn&& fn, std::size_t piece = 1 << 14) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers =
      std::clamp<std::size_t>(threads == 0 ? hw : threads, 1, std::max<std::size_t>(n / 4096, 1));
  pass_interrupts interrupts;
  auto block = [&](std::size_t begin, std::size_t end, bool caller) {
    for (std::size_t at = begin; at < end && !interrupts.stopped(); at += piece) {
      fn(at, std::min(end, at + piece));
      if (caller) interrupts.poll();
    }
  };
  std::mutex mutex;
  std::condition_variable one_finished;
  std::size_t finished = 0;
  std::vector<std::thread> pool_threads;
  for (std::size_t w = 1; w < workers; ++w) {
    pool_threads.emplace_back([&, w] {
      block(n * w / workers, n * (w + 1) / workers, false);
      {
        std::lock_guard lock(mutex);
        ++finished;
      }
      one_finished.notify_one();
    });
  }
  try {
    block(0, n / workers, true);
    // Still heard while the others finish; woken as soon as they have.
    std::unique_lock lock(mutex);
    while (finished + 1 < workers) {
      if (one_finished.wait_for(lock, std::chrono::milliseconds(100)) == std::cv_status::timeout) {
        lock.unlock();
        interrupts.poll();
        lock.lock();
      }
    }
  } catch (const interrupted&) {
    for (auto& t : pool_threads) t.join();
    throw;
  }
  for (auto& t : pool_threads) t.join();
}

/// `body()` with the GIL released; Ctrl-C heard inside it (interrupted) raises
/// KeyboardInterrupt once the GIL is back, everything the body allocated freed by then.
template <class Body>
void released_pass(Body&& body) {
  bool stopped = false;
  {
    nb::gil_scoped_release release;
    try {
      body();
    } catch (const interrupted&) {
      stopped = true;
    }
  }
  if (stopped) throw nb::python_error();
}

/// Summed dimension by dimension in float64, the order scikit-learn's and scipy's trees use, so
/// their distances and these agree to the last bit.
template <class T>
void distance_rows(const T* a, const T* b, std::size_t d, const std::uint64_t* starts,
                   const std::uint32_t* ids, double* dist, std::size_t begin, std::size_t end) {
  for (std::size_t q = begin; q < end; ++q) {
    const T* x = a + q * d;
    for (std::uint64_t k = starts[q]; k < starts[q + 1]; ++k) {
      const T* y = b + std::size_t{ids[k]} * d;
      double sum = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const double diff = static_cast<double>(x[j]) - static_cast<double>(y[j]);
        sum += diff * diff;
      }
      dist[k] = std::sqrt(sum);
    }
  }
}

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
  bool accepts_rows() const override { return true; }
  epsjoin::row_destination begin_rows(std::span<const std::uint32_t> counts) override {
    rows_ = true;
    return table_.begin_rows(counts);
  }
  /// Placed, the rows of the engines that stream them in blocks (the GPU engines) are cut into
  /// the placed pairs as they come, with no table in host memory.
  bool accepts_row_blocks() const override { return place_ != nullptr; }
  void begin_row_blocks(std::span<const std::uint32_t> /*counts*/) override {}
  void consume_row_block(std::size_t first_query, std::span<const std::uint64_t> offsets,
                         std::span<const std::uint32_t> neighbors) override {
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
  bool wants_unordered_pairs() const override { return true; }
  void consume_unordered(std::span<const epsjoin::index_pair> pairs) override {
    if (place_ == nullptr) return add({pairs.begin(), pairs.end()});
    if (pairs.empty()) return;
    std::int64_t* out = place_->claim(pairs.size());
    for (const epsjoin::index_pair& p : pairs) {
      *out++ = p.query;
      *out++ = p.neighbor;
    }
  }
  void finish() override {
    if (rows_) table_.finish();
  }
  bool keeps_result_in_memory() const override { return true; }
  /// Per ordered pair the budget counts (a self-join keeps half of them): 8 bytes a kept pair
  /// while collected, none when placed...
  double bytes_kept_per_pair() const override {
    const double kept = place_ != nullptr ? 0 : 8;
    return keep_all_ ? kept : kept / 2;
  }
  /// ... and 16 in the int64 result, whether placed, grouped or cut from rows.
  double bytes_added_per_pair() const override { return keep_all_ ? 16 : 8; }
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

nb::tuple neighbor_table(points_array queries, std::optional<points_array> data, double eps,
                         bool include_self, bool sort_indices, const run_settings& settings,
                         double added_bytes_per_pair) {
  epsjoin::csr_sink table(sort_indices);
  table_then_arrays_sink sink(table, added_bytes_per_pair);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  return table_result(table, queries.shape(0), stats);
}

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
  epsjoin::csr_sink rows_sink(false);  // rows sorted after the cut, half the work
  // The cut: 16 bytes a kept pair, half the ordered pairs of a self-join.
  table_then_arrays_sink rows_then_pairs(rows_sink, data.has_value() ? 16 : 8);
  epsjoin::result_sink& sink = once ? static_cast<epsjoin::result_sink&>(once_sink) : rows_then_pairs;
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

nb::tuple neighbor_counts(points_array queries, std::optional<points_array> data, double eps,
                          bool include_self, bool per_row, const run_settings& settings) {
  epsjoin::count_sink sink(per_row);
  const epsjoin::join_stats stats = run_join(queries, data, eps, include_self, settings, sink);
  return counts_result(sink, per_row, queries.shape(0), stats);
}

nb::object csr_distances(
    points_array queries, std::optional<points_array> data,
    nb::ndarray<nb::ro, std::uint64_t, nb::ndim<1>, nb::c_contig> indptr,
    nb::ndarray<nb::ro, std::uint32_t, nb::ndim<1>, nb::c_contig> indices, unsigned threads) {
  const epsjoin::dataset_view a = view_of(queries);
  const epsjoin::dataset_view b = data ? view_of(*data) : a;
  if (indptr.shape(0) != a.n + 1) throw epsjoin::invalid_argument("indptr must have n_queries + 1 entries");
  const std::uint64_t* starts = indptr.data();
  const std::uint32_t* ids = indices.data();
  if (starts[a.n] != indices.shape(0)) throw epsjoin::invalid_argument("indptr does not match indices");
  if (a.type != b.type || a.d != b.d) throw epsjoin::invalid_argument("the point sets differ in dtype or d");
  auto out = std::make_unique<output_vector<double>>(indices.shape(0));
  double* dist = out->data();
  released_pass([&] {
    auto rows = [&](std::size_t begin, std::size_t end) {
      if (a.type == epsjoin::scalar_type::f64) {
        distance_rows(static_cast<const double*>(a.data), static_cast<const double*>(b.data), a.d,
                      starts, ids, dist, begin, end);
      } else {
        distance_rows(static_cast<const float*>(a.data), static_cast<const float*>(b.data), a.d,
                      starts, ids, dist, begin, end);
      }
    };
    // Pieces of 256 rows: a row's distances can take a while in many dimensions.
    for_row_blocks(a.n, threads, rows, 256);
  });
  const std::size_t nnz = out->size();
  return numpy_view(dist, {nnz}, owner_of(std::move(out)));
}

nb::object filled_ones(std::size_t n, unsigned threads) {
  auto out = std::make_unique<output_vector<double>>(n);
  double* data = out->data();
  released_pass([&] {
    // The fill is nothing; the page faults of a fresh array are the cost, spread over threads.
    for_row_blocks(n, threads, [&](std::size_t begin, std::size_t end) {
      std::fill(data + begin, data + end, 1.0);
    }, std::size_t{1} << 20);
  });
  return numpy_view(data, {n}, owner_of(std::move(out)));
}

}  // namespace epsjoin_python
