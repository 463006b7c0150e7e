#include "hetero/cpu_share.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/expects.hpp"
#include "core/parallel.hpp"
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
cpu_share<T>::cpu_share(share_settings settings) : s_(std::move(settings)) {
  EPSJOIN_EXPECTS(s_.gpu_fraction >= 0 && s_.gpu_fraction <= 1,
                  "the GPU's fraction lies in [0, 1], got ", s_.gpu_fraction);
  EPSJOIN_EXPECTS(s_.cpu_chunk_queries > 0 && s_.gpu_batches > 0,
                  "hegjoin needs positive chunk and batch counts");
}

template <class T>
cpu_share<T>::~cpu_share() {
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

template <class T>
void cpu_share<T>::plan(std::span<const host_item> items, std::span<const std::uint64_t> candidates,
                        unsigned gpu_streams) {
  EPSJOIN_EXPECTS(gpu_streams > 0, "hegjoin needs at least one GPU stream");
  const auto n = static_cast<std::uint32_t>(items.size());
  set_prefixes(items, candidates);
  begin_plan(n, queries_prefix_.back(), false);
  view_.items = items;
  const bool dynamic = s_.strategy == partition_strategy::dynamic;
  std::uint32_t gpu_part = n;  // items the GPU may take from the front (dynamic: any)
  if (!dynamic) {
    if (s_.strategy == partition_strategy::static_candidates) {
      gpu_part = gpu_items_by_candidates(candidates, s_.gpu_fraction);
    } else {
      const std::uint64_t want =
          gpu_queries_by_count(static_cast<std::uint32_t>(queries_prefix_.back()), s_.gpu_fraction);
      gpu_part = static_cast<std::uint32_t>(
          std::lower_bound(queries_prefix_.begin(), queries_prefix_.end(), want) -
          queries_prefix_.begin());
    }
  }
  if (s_.cpu_threads == 0) {
    EPSJOIN_EXPECTS(dynamic || gpu_part == n, "a static partition gives the CPU ", n - gpu_part,
                    " work items, but cpu_threads is 0");
    gpu_part = n;
  }
  if (dynamic) {
    gpu_deque_ = std::make_unique<work_deque>(n);
  } else {
    gpu_deque_ = std::make_unique<work_deque>(gpu_part);
    cpu_deque_ = std::make_unique<work_deque>(n - gpu_part);
    cpu_offset_ = gpu_part;
  }
  const unsigned batches = std::max(s_.gpu_batches, min_gpu_batches(gpu_streams, dynamic));
  batch_candidates_ = candidates_prefix_[gpu_part] / batches;
  batch_queries_ = queries_prefix_[gpu_part] / batches;
}

template <class T>
void cpu_share<T>::plan_dynamic(std::uint32_t n_items, std::uint64_t n_queries,
                                std::uint64_t candidates, unsigned gpu_streams) {
  EPSJOIN_EXPECTS(s_.strategy == partition_strategy::dynamic,
                  "only dynamic partitioning plans without the items");
  EPSJOIN_EXPECTS(gpu_streams > 0, "hegjoin needs at least one GPU stream");
  candidates_prefix_.clear();
  queries_prefix_.clear();
  begin_plan(n_items, n_queries, true);
  total_queries_ = n_queries;
  total_candidates_ = candidates;
  gpu_deque_ = std::make_unique<work_deque>(n_items);
  cpu_deque_.reset();
  cpu_offset_ = 0;
  const unsigned batches = std::max(s_.gpu_batches, min_gpu_batches(gpu_streams, true));
  batch_items_ = std::max(s_.min_batch_items, (n_items + batches - 1) / batches);
}

template <class T>
void cpu_share<T>::begin_plan(std::uint32_t n_items, std::uint64_t n_queries,
                              bool by_item_count) {
  view_ = {};
  n_items_ = n_items;
  by_item_count_ = by_item_count;
  const double queries_per_item =
      n_items > 0 ? static_cast<double>(n_queries) / static_cast<double>(n_items) : 1.0;
  chunk_items_ = static_cast<std::uint32_t>(
      std::max(1.0, std::round(static_cast<double>(s_.cpu_chunk_queries) / queries_per_item)));
  window_.store(n_items);
  {
    std::lock_guard lock(progress_mutex_);
    gpu_last_ = gpu_before_ = {};
  }
  yielded_.store(0);
  // The per-item range slots are made in start(): under dynamic partitioning at 2-6-D the GPU
  // usually empties the deque before the workers could start, and the slots are never needed.
  item_ranges_.clear();
  item_range_count_.clear();
  clock_.restart();
}

template <class T>
void cpu_share<T>::set_prefixes(std::span<const host_item> items,
                                std::span<const std::uint64_t> candidates) {
  const std::size_t n = items.size();
  candidates_prefix_.assign(n + 1, 0);
  queries_prefix_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    candidates_prefix_[i + 1] = candidates_prefix_[i] + candidates[i];
    queries_prefix_[i + 1] = queries_prefix_[i] + items[i].count;
  }
}

template <class T>
void cpu_share<T>::workload(std::span<const host_item> items,
                            std::span<const std::uint64_t> candidates) {
  EPSJOIN_EXPECTS(by_item_count_ && items.size() == n_items_ && candidates.size() == n_items_,
                  "the workload of ", items.size(), " items follows plan_dynamic of ", n_items_);
  // Read by the workers and after wait(), never by next_gpu_batch in this mode.
  set_prefixes(items, candidates);
}

template <class T>
void cpu_share<T>::start(const host_join_view<T>& view, range_fetcher fetch) {
  EPSJOIN_EXPECTS(!view.halving || (view.self_join && view.d > 0),
                  "the CPU side halves self-joins only");
  EPSJOIN_EXPECTS(!by_item_count_ || queries_prefix_.size() == n_items_ + 1,
                  "plan_dynamic needs workload() before start()");
  const bool ego = s_.cpu_engine == cpu_engine_kind::super_ego;
  EPSJOIN_EXPECTS(!view.halving || !ego, "the super-ego CPU side computes full rows: it does not "
                                         "combine with pattern=lid-unicomp");
  view_ = view;
  if (ego && s_.cpu_threads > 0) {
    // Its own preprocessing, 45-100 ms on 2M points with 15 threads: abandoned, and no worker
    // started, once the GPU has taken everything.
    ego_ = ego_side<T>::build(view_, s_.ego, s_.cpu_threads, [this] { return cpu_work_left(); });
    if (!ego_ || !cpu_work_left()) return;
  }
  started_ = true;
  if (!ego) {
    item_ranges_.assign(n_items_, nullptr);
    item_range_count_.assign(n_items_, 0);
  }
  if (view_.halving) {
    reverse_counts_.assign(view_.query_ids.size(), 0);
    view_.reverse_counts = reverse_counts_.data();
  }
  view_.item_ranges = item_ranges_;
  view_.item_range_count = item_range_count_;
  fetch_ = std::move(fetch);
  rows_.resize(s_.cpu_threads);
  worker_end_.assign(s_.cpu_threads, 0.0);
  for (unsigned w = 0; w < s_.cpu_threads; ++w) workers_.emplace_back(&cpu_share::work, this, w);
}

template <class T>
void cpu_share<T>::reach(std::uint32_t first) {
  // Windows of a fixed number of items (four chunks per worker): at 8-D an item's cell has
  // thousands of ranges, so a window that grew geometrically would end in one long fetch that
  // every worker waits for while the GPU runs dry of competition. The worker that comes within
  // half a window of the edge fetches the next one while the others go on; a worker blocks only
  // when its own chunk lies past the edge.
  const auto step = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      std::uint64_t{4} * chunk_items_ * std::max(1u, s_.cpu_threads), view_.items.size()));
  const std::uint32_t margin = step / 2;
  auto wanted = [&](std::uint32_t window) {
    return window > cpu_offset_ && first < std::uint64_t{window} + margin;
  };
  if (!wanted(window_.load(std::memory_order_acquire))) return;
  std::unique_lock lock(fetch_mutex_, std::defer_lock);
  if (first < window_.load(std::memory_order_acquire)) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return;  // another worker is fetching the next window already
  }
  std::uint32_t window = window_.load(std::memory_order_relaxed);
  while (wanted(window)) {
    const std::uint32_t by_step = window > step ? window - step : 0;
    const std::uint32_t lo = std::max(std::min(first, by_step), cpu_offset_);
    std::vector<host_range>& block = range_blocks_.emplace_back();
    std::vector<std::uint32_t> counts;
    fetch_(lo, window, block, counts);
    std::size_t at = 0;
    for (std::uint32_t i = lo; i < window; ++i) {
      item_ranges_[i] = block.data() + at;
      item_range_count_[i] = counts[i - lo];
      at += counts[i - lo];
    }
    window = lo;
    window_.store(lo, std::memory_order_release);
  }
}

template <class T>
void cpu_share<T>::work(unsigned worker) {
  work_deque& deque = cpu_deque_ ? *cpu_deque_ : *gpu_deque_;
  // Only under dynamic partitioning can the GPU take what the CPU leaves.
  const bool may_yield = s_.cpu_yields && dynamic();
  std::uint32_t last_items = 0;
  std::uint64_t last_candidates = 0;
  double last_seconds = 0;
  try {
    for (;;) {
      if (may_yield && last_items > 0) {
        const item_range left = deque.left();
        const item_range next{left.end - std::min(left.size(), chunk_items_), left.end};
        if (!next.empty() && leave_to_gpu(next, last_items, last_candidates, last_seconds)) {
          yielded_.fetch_add(1, std::memory_order_relaxed);
          break;
        }
      }
      const item_range r = deque.take_back(chunk_items_);
      if (r.empty()) break;
      stopwatch chunk_clock;
      const std::uint32_t first = r.begin + cpu_offset_, end = r.end + cpu_offset_;
      const std::uint64_t chunk_candidates = candidates_prefix_[end] - candidates_prefix_[first];
      if (ego_) {
        ego_->join_items(first, end, rows_[worker]);
        rows_[worker].candidates += chunk_candidates;
      } else {
        reach(first);
        join_items_on_cpu(view_, first, end, rows_[worker]);
      }
      last_items = r.size();
      last_candidates = chunk_candidates;
      last_seconds = chunk_clock.seconds();
    }
  } catch (...) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
  worker_end_[worker] = clock_.seconds();
}

template <class T>
bool cpu_share<T>::leave_to_gpu(const item_range& next, std::uint32_t items,
                                std::uint64_t candidates, double seconds) const {
  gpu_mark last, before;
  {
    std::lock_guard lock(progress_mutex_);
    last = gpu_last_;
    before = gpu_before_;
  }
  // No rate to judge by yet. (The GPU's completed items never pass the back, so last.done <=
  // next.end; the test keeps the prefix differences below from wrapping if that ever changed.)
  if (last.done == 0 || last.done > next.end) return false;
  // The GPU's rate in candidates over its latest reported batches: the lighter the items, the
  // slower it goes per candidate, so its rate over the whole join would have it finish far too
  // soon (Expo8D 2M at S 50, device run 1 of session 10: the workers left 28 ms before the GPU
  // was done). On the still lighter items left it is slower again, so the CPU may still leave
  // early, which costs the balance but not time: the GPU finishes light items quickly.
  const std::uint64_t rated = candidates_prefix_[last.done] - candidates_prefix_[before.done];
  const double gpu_rate = static_cast<double>(rated) / (last.at - before.at);
  if (!(gpu_rate > 0)) return false;
  const double gpu_left =
      static_cast<double>(candidates_prefix_[next.end] - candidates_prefix_[last.done]) /
          gpu_rate -
      (clock_.seconds() - last.at);
  // The next chunk is a little heavier than the last: scaled by items or by candidates,
  // whichever grew more (at 8-D a light item's cost is more its ranges than its candidates).
  const std::uint64_t next_candidates =
      candidates_prefix_[next.end] - candidates_prefix_[next.begin];
  double scale = static_cast<double>(next.size()) / static_cast<double>(items);
  if (candidates > 0) {
    scale = std::max(scale,
                     static_cast<double>(next_candidates) / static_cast<double>(candidates));
  }
  return seconds * scale > gpu_left;
}

template <class T>
void cpu_share<T>::gpu_progress(std::uint32_t items_done) {
  const double now = clock_.seconds();
  std::lock_guard lock(progress_mutex_);
  if (items_done <= gpu_last_.done || now <= gpu_last_.at) return;
  gpu_before_ = gpu_last_;
  gpu_last_ = {items_done, now};
}

template <class T>
item_range cpu_share<T>::next_gpu_batch() {
  // Only the GPU moves the front, so the front read here is exact; the back may move meanwhile,
  // which take_front clamps.
  if (by_item_count_) {
    const item_range r = gpu_deque_->take_front(batch_items_);
    if (!r.empty()) {
      ++gpu_.batches;
      gpu_items_ = r.end;
    }
    return r;
  }
  const std::uint32_t front = gpu_deque_->front();
  const std::uint32_t n = n_items_;
  // A batch holds its share of the candidates or of the queries, whichever comes first, but
  // never fewer items than fill the device several times over.
  std::uint32_t end = front;
  auto open = [&] {
    const std::uint64_t queries = queries_prefix_[end] - queries_prefix_[front];
    const std::uint64_t candidates = candidates_prefix_[end] - candidates_prefix_[front];
    return end - front < s_.min_batch_items ||
           (candidates < batch_candidates_ && queries < batch_queries_);
  };
  while (end < n && open()) ++end;
  const item_range r = gpu_deque_->take_front(std::max(end - front, 1u));
  if (!r.empty()) {
    ++gpu_.batches;
    gpu_items_ = r.end;
  }
  return r;
}

template <class T>
bool cpu_share<T>::cpu_work_left() const {
  const work_deque* cpu_part = cpu_deque_ ? cpu_deque_.get() : gpu_deque_.get();
  return cpu_part != nullptr && cpu_part->remaining() > 0;
}

template <class T>
void cpu_share<T>::gpu_finished() {
  gpu_.seconds = clock_.seconds();
}

template <class T>
void cpu_share<T>::wait() {
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
  if (error_) std::rethrow_exception(error_);
  // Dynamic: the GPU's items end where the front stopped; static: at the split.
  gpu_items_ = cpu_deque_ ? cpu_offset_ : gpu_deque_->front();
  gpu_.items = gpu_items_;
  if (queries_prefix_.empty()) {
    // plan_dynamic without workload(): the CPU side never came to it, so the GPU took everything.
    EPSJOIN_EXPECTS(gpu_items_ == n_items_, "the GPU took ", gpu_items_, " of ", n_items_,
                    " items, and the CPU side has no workload");
    gpu_.queries = total_queries_;
    gpu_.candidates = total_candidates_;
  } else {
    gpu_.queries = queries_prefix_[gpu_items_];
    gpu_.candidates = candidates_prefix_[gpu_items_];
  }
}

template <class T>
void cpu_share<T>::stop() noexcept {
  constexpr std::uint32_t everything = ~std::uint32_t{0};
  if (gpu_deque_) (void)gpu_deque_->take_front(everything);
  if (cpu_deque_) (void)cpu_deque_->take_front(everything);
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

template <class T>
side_totals cpu_share<T>::cpu() const {
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
bool cpu_share<T>::found_any() const {
  // Under halving every reverse hit is some row's own hit, so own hits tell.
  return std::any_of(rows_.begin(), rows_.end(),
                     [](const cpu_rows& r) { return !r.neighbors.empty(); });
}

template <class T>
std::vector<std::uint32_t> cpu_share<T>::counts_by_position(std::uint32_t positions) const {
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
void cpu_share<T>::deliver_rows(const row_destination& dest,
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
    return dest.neighbors + dest.starts[query_ids[p]] + (gpu_counts.empty() ? 0 : gpu_counts[p]);
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
void cpu_share<T>::deliver_pairs(result_sink& sink) const {
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

template <class T>
void cpu_share<T>::report(join_stats& stats) const {
  const side_totals c = cpu();
  const double all_queries = static_cast<double>(gpu_.queries + c.queries);
  const double all_candidates = static_cast<double>(gpu_.candidates + c.candidates);
  auto share = [](double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; };
  auto rate = [](std::uint64_t candidates, double seconds) {
    return seconds > 0 ? static_cast<double>(candidates) / seconds : 0.0;
  };
  // A CPU side that never started (the GPU emptied the deque before its copies were ready) had
  // nothing to finish: it counts as done when the GPU was.
  const double cpu_end = started_ ? c.seconds : gpu_.seconds;
  const double total = std::max(gpu_.seconds, cpu_end);
  const double imbalance = total > 0 ? std::abs(gpu_.seconds - cpu_end) / total : 0.0;
  stats.notes.push_back({"partition", s_.summary});
  stats.notes.push_back(
      {"gpu share", concat(gpu_.queries, " queries (", share(gpu_.queries, all_queries), "%), ",
                           gpu_.candidates, " candidates (", share(gpu_.candidates, all_candidates),
                           "%), ", gpu_.batches, " batches, done at ", gpu_.seconds, " s")});
  stats.notes.push_back(
      {"cpu share",
       concat(c.queries, " queries (", share(c.queries, all_queries), "%), ", c.candidates,
              " candidates (", share(c.candidates, all_candidates), "%), ", s_.cpu_threads,
              " threads, chunks of ", chunk_items_, " items, ",
              started_ ? concat("done at ", c.seconds, " s")
                       : std::string("not started (the GPU emptied the deque first)"),
              yielded_ > 0 ? concat("; ", yielded_.load(), " workers left the rest to the GPU, "
                                    "which would finish it before their next chunk")
                           : std::string())});
  if (s_.cpu_engine == cpu_engine_kind::super_ego) {
    std::uint64_t distances = 0;
    for (const cpu_rows& r : rows_) distances += r.distances;
    stats.notes.push_back(
        {"cpu engine", ego_ ? concat(ego_->describe(), ", ", distances, " distances computed")
                            : std::string("super-ego (index not built: the GPU took everything)")});
  } else {
    stats.notes.push_back({"cpu engine", "grid (a host copy of the GPU's index)"});
  }
  stats.notes.push_back({"gpu seconds", concat(gpu_.seconds)});
  stats.notes.push_back({"cpu seconds", concat(cpu_end)});
  stats.notes.push_back({"gpu candidates", concat(gpu_.candidates)});
  stats.notes.push_back({"cpu candidates", concat(c.candidates)});
  stats.notes.push_back({"load imbalance", concat(imbalance)});
  stats.notes.push_back(
      {"candidate throughput", concat("GPU ", rate(gpu_.candidates, gpu_.seconds), "/s, CPU ",
                                      rate(c.candidates, c.seconds), "/s, both ",
                                      rate(gpu_.candidates + c.candidates, total), "/s")});
}

template class cpu_share<float>;
template class cpu_share<double>;

}  // namespace epsjoin::detail::hetero
