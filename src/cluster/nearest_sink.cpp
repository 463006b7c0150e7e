// The k nearest within a radius (epsjoin/nearest.hpp): a bounded max-heap per query, its
// largest (distance, id) on top, so a pair is kept in O(log k) and the heaps hold k entries a
// query whatever the join delivers. Pairs come from several threads; a lock guards each stripe
// of queries (the blocks one thread hands over are mostly of one cell's queries, so threads
// rarely meet on a stripe).

#include <algorithm>
#include <atomic>
#include <cmath>

#include "base/expects.hpp"
#include "cluster/pair_distance.hpp"
#include "epsjoin/nearest.hpp"

namespace epsjoin {

namespace {

struct near_entry {
  double distance;
  std::uint32_t id;
  // Nearest first; equal distances by id, so every engine and run keeps the same k.
  friend bool operator<(const near_entry& a, const near_entry& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.id < b.id);
  }
};

constexpr std::size_t lock_stripes = 4096;

class stripe_lock {
 public:
  explicit stripe_lock(std::atomic_flag& flag) : flag_(flag) {
    while (flag_.test_and_set(std::memory_order_acquire))
      flag_.wait(true, std::memory_order_relaxed);
  }
  ~stripe_lock() {
    flag_.clear(std::memory_order_release);
    flag_.notify_one();
  }
  stripe_lock(const stripe_lock&) = delete;
  stripe_lock& operator=(const stripe_lock&) = delete;

 private:
  std::atomic_flag& flag_;
};

}  // namespace

struct nearest_sink::state {
  state(detail::pair_distance d, std::size_t k_kept) : distance(std::move(d)), k(k_kept) {}
  detail::pair_distance distance;
  std::size_t k = 0;
  std::vector<near_entry> heaps;    // [n_queries x k]
  std::vector<std::uint32_t> kept;  // [n_queries] entries in each heap
  std::unique_ptr<std::atomic_flag[]> locks{new std::atomic_flag[lock_stripes]};

  void keep(std::uint32_t q, near_entry e) {
    near_entry* heap = heaps.data() + static_cast<std::size_t>(q) * k;
    std::uint32_t& size = kept[q];
    if (size < k) {
      heap[size++] = e;
      std::push_heap(heap, heap + size);
    } else if (e < heap[0]) {
      std::pop_heap(heap, heap + size);
      heap[size - 1] = e;
      std::push_heap(heap, heap + size);
    }
  }
};

nearest_sink::nearest_sink(dataset_view queries, dataset_view data, std::size_t k,
                           const join_options& options)
    : queries_n_(queries.n), data_n_(data.n) {
  EPSJOIN_EXPECTS(k >= 1, "k must be at least 1, got 0");
  EPSJOIN_EXPECTS(!queries.on_device() && !data.on_device(),
                  "the nearest neighbours are kept from points in host memory");
  state_ = std::make_unique<state>(detail::pair_distance(queries, data, options), k);
}

nearest_sink::~nearest_sink() = default;

sink_request nearest_sink::request() const {
  // Pairs alone: the distance of each is computed here, and no pair is kept beyond its heap.
  return {};
}

void nearest_sink::begin(const sink_info& info) {
  EPSJOIN_EXPECTS(info.n_queries == queries_n_ && info.n_data == data_n_, "nearest_sink made for ",
                  queries_n_, " queries and ", data_n_, " points, joined with ", info.n_queries,
                  " and ", info.n_data);
  state_->heaps.resize(info.n_queries * state_->k);
  state_->kept.assign(info.n_queries, 0);
  table_ = {};
}

void nearest_sink::consume(std::span<const index_pair> pairs) {
  state& s = *state_;
  // A query's pairs mostly come together: their distances first, then one lock for the run.
  thread_local std::vector<near_entry> run;
  for (std::size_t a = 0; a < pairs.size();) {
    const std::uint32_t q = pairs[a].query;
    run.clear();
    for (; a < pairs.size() && pairs[a].query == q; ++a) {
      run.push_back({s.distance(q, pairs[a].neighbor), pairs[a].neighbor});
    }
    const stripe_lock held(s.locks[q % lock_stripes]);
    for (const near_entry& e : run) s.keep(q, e);
  }
}

void nearest_sink::finish() {
  state& s = *state_;
  const std::size_t n = s.kept.size();
  table_.offsets.assign(n + 1, 0);
  for (std::size_t q = 0; q < n; ++q) table_.offsets[q + 1] = table_.offsets[q] + s.kept[q];
  table_.neighbors.resize(table_.offsets[n]);
  table_.distances.resize(table_.offsets[n]);
  for (std::size_t q = 0; q < n; ++q) {
    near_entry* heap = s.heaps.data() + q * s.k;
    std::sort_heap(heap, heap + s.kept[q]);
    for (std::uint32_t r = 0; r < s.kept[q]; ++r) {
      table_.neighbors[table_.offsets[q] + r] = heap[r].id;
      table_.distances[table_.offsets[q] + r] = heap[r].distance;
    }
  }
  s.heaps = {};
  s.kept = {};
}

}  // namespace epsjoin
