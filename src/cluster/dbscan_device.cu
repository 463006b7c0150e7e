// DBSCAN's merge on the device (dbscan_device.hpp). The counting pass's counts give the core
// flags; the filling pass links every pair it finds into the union-find (base/core_links.cuh),
// indexed by the join's positions, and writes no row; the labels are made here, by caller id,
// and only they and the core flags come back, through the pinned ring where they are large.

#include "cluster/dbscan_device.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstring>
#include <future>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "base/core_links.cuh"
#include "base/cub_call.cuh"
#include "base/gpu_state.cuh"
#include "base/memory.cuh"
#include "base/memory_budget.hpp"
#include "base/parallel.hpp"
#include "base/pinned_ring.cuh"
#include "base/timer.hpp"
#include "core/device_links.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin::detail {

namespace {

constexpr std::uint32_t not_core = core_links::not_core;
/// A point's smallest core neighbour before any is found; also "no cluster" for noise.
constexpr std::uint32_t none = core_links::no_core_neighbor;
constexpr unsigned block = 256;
constexpr unsigned warp_size = 32;
constexpr unsigned full_mask = 0xffffffffu;

__device__ void add_warp_total(unsigned long long* total, unsigned long long value) {
  for (unsigned offset = warp_size / 2; offset > 0; offset /= 2) {
    value += __shfl_down_sync(full_mask, value, offset);
  }
  if ((threadIdx.x % warp_size) == 0 && value != 0) atomicAdd(total, value);
}

__device__ void add_votes(unsigned long long* tally, bool vote) {
  const unsigned votes = __ballot_sync(full_mask, vote);
  if ((threadIdx.x % warp_size) == 0 && votes != 0) atomicAdd(tally, __popc(votes));
}

/// By position p: the union-find's start, the core flag and where each caller id lies.
__global__ void mark_core(const std::uint32_t* counts, const std::uint32_t* ids,
                          std::uint32_t positions, unsigned long long min_samples,
                          std::uint8_t* core, std::uint32_t* parent, std::uint32_t* min_core,
                          std::uint32_t* position_of, unsigned long long* pairs) {
  const std::uint64_t p = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  unsigned long long found = 0;
  if (p < positions) {
    const auto at = static_cast<std::uint32_t>(p);
    const std::uint32_t id = ids[p];
    found = counts[p];
    const bool is_core = found + 1 >= min_samples;
    core[id] = is_core ? 1 : 0;
    position_of[id] = at;
    parent[p] = is_core ? at : not_core;
    min_core[p] = none;
  }
  add_warp_total(pairs, found);
}

// By position: every core point's path to its root halved, so that find_roots' walks, which may
// not write, are short. (Linking keeps a query's root and finds seldom: paths stay long.)
__global__ void shorten_paths(std::uint32_t n, std::uint32_t* parent) {
  const std::uint64_t p = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (p < n && load_parent(parent, static_cast<std::uint32_t>(p)) != not_core) {
    find_root(parent, static_cast<std::uint32_t>(p));
  }
}

// Finds that start at and pass through core points only, without halving: a halving could put
// back a stale ancestor after the point's own thread wrote its root, but a root written
// meanwhile is an ancestor too.
__device__ std::uint32_t root_without_halving(const std::uint32_t* parent, std::uint32_t x) {
  for (std::uint32_t p = load_parent(parent, x); p != x; p = load_parent(parent, x)) x = p;
  return x;
}

// By position: each point's cluster root in place of its parent (a border point's is its
// smallest core neighbour's), `none` for noise; the tallies of core, border and noise points.
__global__ void find_roots(std::uint32_t n, std::uint32_t* parent, const std::uint32_t* min_core,
                           const std::uint32_t* position_of, unsigned long long* tally) {
  const std::uint64_t p = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  int kind = -1;  // 0 core, 1 border, 2 noise
  if (p < n) {
    const auto at = static_cast<std::uint32_t>(p);
    std::uint32_t r = none;
    if (load_parent(parent, at) != not_core) {
      r = root_without_halving(parent, at);
      kind = 0;
    } else if (min_core[p] != none) {
      r = root_without_halving(parent, position_of[min_core[p]]);
      kind = 1;
    } else {
      kind = 2;
    }
    parent[p] = r;
  }
  for (int k = 0; k < 3; ++k) add_votes(tally + k, kind == k);
}

// By caller id: each cluster's first core point (clusters are numbered in that order, as
// scikit-learn numbers them), at its root's position.
__global__ void find_firsts(std::uint32_t n, const std::uint8_t* core, const std::uint32_t* root,
                            const std::uint32_t* position_of, std::uint32_t* first) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n && core[i] != 0) atomicMin(first + root[position_of[i]], static_cast<std::uint32_t>(i));
}

// By caller id: 1 for each cluster's first core point, counting the clusters.
__global__ void flag_firsts(std::uint32_t n, const std::uint8_t* core, const std::uint32_t* root,
                            const std::uint32_t* position_of, const std::uint32_t* first,
                            std::uint32_t* flag, unsigned long long* clusters) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  bool is_first = false;
  if (i < n) {
    is_first = core[i] != 0 && first[root[position_of[i]]] == i;
    flag[i] = is_first ? 1 : 0;
  }
  add_votes(clusters, is_first);
}

// By caller id: label + 1 (0 for noise, so that every label of up to 2^32 - 1 points fits),
// written over position_of: each thread reads its own entry before writing it.
__global__ void write_labels(std::uint32_t n, const std::uint32_t* root, const std::uint32_t* first,
                             const std::uint32_t* number, std::uint32_t* position_of) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t r = root[position_of[i]];
  position_of[i] = r == none ? 0 : number[first[r]] + 1;
}

/// Resizes `v` to n zeros, asking first (advice only) that its memory be backed by huge pages.
template <class T>
void size_in_huge_pages(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t first = (begin + huge_page - 1) / huge_page * huge_page;
  const std::uintptr_t last = (begin + n * sizeof(T)) / huge_page * huge_page;
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
  v.resize(n);
}

/// Arrays this small stay with the resources for the next call, so a small DBSCAN that the
/// caller repeats on one `resources` (Python's estimator does) allocates nothing.
constexpr std::uint64_t kept_arena_bytes = std::uint64_t{64} << 20;

/// The union-find the join links its pairs into, and the labels made from it.
class union_find_consumer final : public device_link_consumer {
 public:
  /// Labels `out`, whose arrays it sizes on a host thread while the device works.
  /// `overrides`: the join's parameters' (tests make the pinned ring's chunks small with them).
  union_find_consumer(resources& res, std::size_t n, std::size_t min_samples,
                      const memory_overrides& overrides, dbscan_result& out)
      : res_(res),
        overrides_(overrides),
        n_(static_cast<std::uint32_t>(n)),
        min_samples_(min_samples),
        out_(out) {}

  ~union_find_consumer() override {
    if (ring_.valid()) ring_.wait();
    if (gpu_ != nullptr && gpu_->point_arrays.capacity() > kept_arena_bytes) {
      gpu_->point_arrays.release();
    }
  }
  union_find_consumer(const union_find_consumer&) = delete;
  union_find_consumer& operator=(const union_find_consumer&) = delete;

  // Sizing the result's 9 bytes a point on one thread takes longer than a 2-D join of them
  // (0.36 s and more at 50M points on the H200 machine, nearly all of it 4 KiB page faults): it
  // starts with the join, in huge pages where the kernel has them.
  void linking_starts() override {
    room_ = std::jthread([this] {
      size_in_huge_pages(out_.labels, n_);
      size_in_huge_pages(out_.core, n_);
    });
  }

  core_links take_counts(const std::uint32_t* counts, const std::uint32_t* ids,
                         std::uint32_t positions, CUstream_st* stream) override {
    EPSJOIN_ENSURE(positions == n_, error, "internal: DBSCAN's device merge got ", positions,
                   " query positions for ", n_, " points");
    counted_at_ = clock_.seconds();
    stream_ = stream;
    gpu_ = &acquire_gpu(res_);
    const memory_budget budget(res_.memory(), overrides_);
    // The labels come back through the pinned ring: its first pinning overlaps the linking.
    const std::uint64_t chunk_ids = ring_chunk_ids(budget);
    if (std::uint64_t{n_} * 5 > chunk_ids * 4) ring_ = reserve_ring(*gpu_, chunk_ids);
    if (!room_.joinable()) linking_starts();
    carve_arrays(budget);
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(tally_, 0, 5 * sizeof(unsigned long long), stream));
    mark_core<<<grid_size(n_, block), block, 0, stream>>>(counts, ids, n_, min_samples_, core_,
                                                          parent_, min_core_, position_of_,
                                                          tally_ + 4);
    EPSJOIN_CHECK_LAUNCH();
    return {parent_, min_core_};
  }

  bool took_counts() const { return stream_ != nullptr; }
  double counted_at() const { return counted_at_; }

  /// Labels and core flags into the result, with the tallies and the pairs the counting pass
  /// found.
  void label() {
    cudaStream_t stream = stream_;
    const unsigned blocks = grid_size(n_, block);
    std::uint32_t* root = parent_;
    cuda_event kernels_start, kernels_end;
    kernels_start.record(stream);
    shorten_paths<<<blocks, block, 0, stream>>>(n_, parent_);
    EPSJOIN_CHECK_LAUNCH();
    find_roots<<<blocks, block, 0, stream>>>(n_, root, min_core_, position_of_, tally_);
    EPSJOIN_CHECK_LAUNCH();
    // The smallest core neighbours are read: their room takes each cluster's first point.
    std::uint32_t* first = min_core_;
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(first, 0xff, sizeof(std::uint32_t) * n_, stream));
    find_firsts<<<blocks, block, 0, stream>>>(n_, core_, root, position_of_, first);
    EPSJOIN_CHECK_LAUNCH();
    flag_firsts<<<blocks, block, 0, stream>>>(n_, core_, root, position_of_, first, number_,
                                              tally_ + 3);
    EPSJOIN_CHECK_LAUNCH();
    cub_call(gpu_->scratch, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(temp, bytes, number_, number_, n_, stream);
    });
    std::uint32_t* labels = position_of_;
    write_labels<<<blocks, block, 0, stream>>>(n_, root, first, number_, labels);
    EPSJOIN_CHECK_LAUNCH();
    kernels_end.record(stream);
    unsigned long long tally[5] = {};
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(tally, tally_, sizeof tally, cudaMemcpyDeviceToHost,
                                     stream));
    stopwatch clock;
    room_.join();
    if (ring_.valid()) ring_.get();
    const double waited = clock.seconds();
    clock.restart();
    bring_back(labels);
    dbscan_result& r = out_;
    r.notes.push_back({"label kernels seconds", concat(kernels_end.since(kernels_start) * 1e-3)});
    r.notes.push_back({"label waited for the host arrays and the ring", concat(waited)});
    r.notes.push_back({"label copy back seconds", concat(clock.seconds())});
    r.n_core = tally[0];
    r.n_border = tally[1];
    r.n_noise = tally[2];
    r.n_clusters = tally[3];
    r.pairs = tally[4];
  }

 private:
  // The per-point arrays, carved from the resources' arena (grown within the budget when short):
  // parent (then the cluster roots) 4 bytes, smallest core neighbour (then each cluster's first
  // point) 4, each caller id's position (then its label) 4, the cluster numbers 4, core flag 1.
  void carve_arrays(const memory_budget& budget) {
    constexpr std::uint64_t align = 256;
    const auto rounded = [](std::uint64_t bytes) { return (bytes + align - 1) / align * align; };
    const std::uint64_t words = rounded(sizeof(std::uint32_t) * std::uint64_t{n_});
    const std::uint64_t bytes = 4 * words + rounded(n_) + 5 * sizeof(unsigned long long);
    device_buffer<unsigned char>& arena = gpu_->point_arrays;
    if (arena.capacity() < bytes) {
      arena.release();
      std::size_t free = 0, total = 0;
      EPSJOIN_CUDA_TRY(cudaMemGetInfo(&free, &total));
      EPSJOIN_ENSURE(bytes <= budget.device_bytes(free), out_of_memory,
                     "DBSCAN's device merge of ", n_, " points needs ", bytes,
                     " bytes of device memory beside the join but ", budget.device_bytes(free),
                     " are available: raise the device memory limit or use fewer points");
      arena.reserve(bytes);
    }
    unsigned char* at = arena.data();
    parent_ = reinterpret_cast<std::uint32_t*>(at);
    min_core_ = reinterpret_cast<std::uint32_t*>(at + words);
    position_of_ = reinterpret_cast<std::uint32_t*>(at + 2 * words);
    number_ = reinterpret_cast<std::uint32_t*>(at + 3 * words);
    core_ = at + 4 * words;
    tally_ = reinterpret_cast<unsigned long long*>(core_ + rounded(n_));
  }

  // The labels (label + 1, 32 bits) and core flags into the result: through the pinned ring
  // when it is there, pieces widened on the host threads while the next ones cross; a pageable
  // copy crosses on the driver's one thread at about 7 GB/s.
  void bring_back(const std::uint32_t* labels) {
    dbscan_result& r = out_;
    const unsigned threads = res_.threads();
    const auto widen = [&](const std::uint32_t* from, std::size_t begin, std::size_t end) {
      parallel_for(threads, end - begin, std::size_t{1} << 18,
                   [&](std::size_t b, std::size_t e, unsigned) {
                     for (std::size_t i = b; i < e; ++i) {
                       r.labels[begin + i] = static_cast<std::int64_t>(from[i]) - 1;
                     }
                   });
    };
    const std::size_t slot_words = gpu_->row_chunks[0].capacity();
    // Per point: its label's word and its core flag's byte.
    const std::size_t piece = slot_words * 4 / 5;
    if (piece < (std::size_t{1} << 16) || n_ <= piece) {
      std::vector<std::uint32_t> host(n_);
      EPSJOIN_CUDA_TRY(cudaMemcpyAsync(host.data(), labels, sizeof(std::uint32_t) * n_,
                                       cudaMemcpyDeviceToHost, stream_));
      EPSJOIN_CUDA_TRY(
          cudaMemcpyAsync(r.core.data(), core_, n_, cudaMemcpyDeviceToHost, stream_));
      EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream_));
      widen(host.data(), 0, n_);
      return;
    }
    const std::size_t pieces = (n_ + piece - 1) / piece;
    const auto range = [&](std::size_t k) {
      return std::pair{k * piece, std::min<std::size_t>(n_, (k + 1) * piece)};
    };
    copy_through_ring(
        gpu_->row_chunks, stream_, pieces,
        [&](std::size_t k, std::uint32_t* slot) {
          const auto [b, e] = range(k);
          EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot, labels + b, sizeof(std::uint32_t) * (e - b),
                                           cudaMemcpyDeviceToHost, stream_));
          EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slot + (e - b), core_ + b, e - b,
                                           cudaMemcpyDeviceToHost, stream_));
        },
        [&](std::size_t k, const std::uint32_t* slot) {
          const auto [b, e] = range(k);
          widen(slot, b, e);
          std::memcpy(r.core.data() + b, slot + (e - b), e - b);
        });
  }

  resources& res_;
  memory_overrides overrides_;
  gpu_state* gpu_ = nullptr;  // acquired with the counts: a join that cannot link runs nothing
  std::uint32_t n_;
  std::size_t min_samples_;
  dbscan_result& out_;
  stopwatch clock_;
  double counted_at_ = 0;
  cudaStream_t stream_ = nullptr;
  std::uint32_t* parent_ = nullptr;
  std::uint32_t* min_core_ = nullptr;
  std::uint32_t* position_of_ = nullptr;
  std::uint32_t* number_ = nullptr;
  std::uint8_t* core_ = nullptr;
  /// core, border, noise, clusters, pairs
  unsigned long long* tally_ = nullptr;
  std::future<void> ring_;  // the pinned ring's reservation, when the labels need it
  std::jthread room_;  // the last member: joined first when the consumer goes, on an error too
};

}  // namespace

std::optional<dbscan_result> dbscan_on_device(resources& res, dataset_view points, double eps,
                                              std::size_t min_samples,
                                              const dbscan_options& options) {
  join_options o;
  o.eps = eps;
  o.engine = options.engine;
  o.precision = options.precision;
  o.params = options.params;
  o.progress = options.progress;
  dbscan_result r;
  union_find_consumer merger(res, points.n, min_samples, read_memory_overrides(options.params), r);
  stopwatch clock;
  const std::optional<join_stats> s = self_join_on_device(res, points, o, merger);
  if (!s) return std::nullopt;
  EPSJOIN_ENSURE(merger.took_counts(), error,
                 "internal: the device-links join of ", points.n, " points gave no counts");
  const double joined = clock.seconds();
  r.engine = s->engine;
  r.merge = "device";
  for (const stage_time& st : s->stages) {
    r.notes.push_back({concat("join stage ", st.name), concat(st.seconds)});
  }
  for (const auto& note : s->notes) r.notes.push_back(note);
  // Zero for points already in device memory: what says they were clustered where they lie.
  r.notes.push_back({"h2d_point_bytes", concat(s->h2d_point_bytes)});
  clock.restart();
  merger.label();
  r.stages.push_back({"count", merger.counted_at()});
  r.stages.push_back({"merge", joined - merger.counted_at()});
  r.stages.push_back({"label", clock.seconds()});
  return r;
}

}  // namespace epsjoin::detail
