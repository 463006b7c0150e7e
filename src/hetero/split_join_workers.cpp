// split_join's CPU workers: their lifetime, how they take items from the CPU's end of the deque
// (fetching the items' ranges from the device as it grows), and the GPU's end handed out batch by batch.

#include "hetero/split_join.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "hetero/partition.hpp"

namespace epsjoin::detail::hetero {

template <class T>
split_join<T>::split_join(share_settings settings) : s_(std::move(settings)) {
  EPSJOIN_EXPECTS(s_.gpu_fraction >= 0 && s_.gpu_fraction <= 1,
                  "the GPU's fraction lies in [0, 1], got ", s_.gpu_fraction);
  EPSJOIN_EXPECTS(s_.cpu_chunk_queries > 0 && s_.gpu_batches > 0,
                  "hegjoin needs positive chunk and batch counts");
}

template <class T>
split_join<T>::~split_join() {
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

template <class T>
void split_join<T>::start(const host_join_view<T>& view, range_fetcher fetch) {
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
  for (unsigned w = 0; w < s_.cpu_threads; ++w) workers_.emplace_back(&split_join::work, this, w);
}

template <class T>
void split_join<T>::reach(std::uint32_t first) {
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
void split_join<T>::work(unsigned worker) {
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
bool split_join<T>::leave_to_gpu(const item_range& next, std::uint32_t items,
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
void split_join<T>::gpu_progress(std::uint32_t items_done) {
  const double now = clock_.seconds();
  std::lock_guard lock(progress_mutex_);
  if (items_done <= gpu_last_.done || now <= gpu_last_.at) return;
  gpu_before_ = gpu_last_;
  gpu_last_ = {items_done, now};
}

template <class T>
item_range split_join<T>::next_gpu_batch() {
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
bool split_join<T>::cpu_work_left() const {
  const work_deque* cpu_part = cpu_deque_ ? cpu_deque_.get() : gpu_deque_.get();
  return cpu_part != nullptr && cpu_part->remaining() > 0;
}

template <class T>
void split_join<T>::gpu_finished() {
  gpu_.seconds = clock_.seconds();
}

template <class T>
void split_join<T>::wait() {
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
void split_join<T>::stop() noexcept {
  constexpr std::uint32_t everything = ~std::uint32_t{0};
  if (gpu_deque_) (void)gpu_deque_->take_front(everything);
  if (cpu_deque_) (void)cpu_deque_->take_front(everything);
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

template split_join<float>::split_join(share_settings settings);
template split_join<double>::split_join(share_settings settings);
template split_join<float>::~split_join();
template split_join<double>::~split_join();
template void split_join<float>::start(const host_join_view<float>& view, range_fetcher fetch);
template void split_join<double>::start(const host_join_view<double>& view, range_fetcher fetch);
template void split_join<float>::reach(std::uint32_t first);
template void split_join<double>::reach(std::uint32_t first);
template void split_join<float>::work(unsigned worker);
template void split_join<double>::work(unsigned worker);
template bool split_join<float>::leave_to_gpu(const item_range& next, std::uint32_t items,
                                std::uint64_t candidates, double seconds) const;
template bool split_join<double>::leave_to_gpu(const item_range& next, std::uint32_t items,
                                std::uint64_t candidates, double seconds) const;
template void split_join<float>::gpu_progress(std::uint32_t items_done);
template void split_join<double>::gpu_progress(std::uint32_t items_done);
template item_range split_join<float>::next_gpu_batch();
template item_range split_join<double>::next_gpu_batch();
template bool split_join<float>::cpu_work_left() const;
template bool split_join<double>::cpu_work_left() const;
template void split_join<float>::gpu_finished();
template void split_join<double>::gpu_finished();
template void split_join<float>::wait();
template void split_join<double>::wait();
template void split_join<float>::stop() noexcept;
template void split_join<double>::stop() noexcept;

}  // namespace epsjoin::detail::hetero
