// DBSCAN's merge on the device (dbscan_device.hpp). The counting pass's counts give the core
// flags; the filling pass links every pair it finds into the union-find (base/core_links.cuh)
// and writes no row; the labels are finished here and only they and the core flags come back.

#include "cluster/dbscan_device.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <thread>

#include "base/core_links.cuh"
#include "base/cub_call.cuh"
#include "base/gpu_state.cuh"
#include "base/memory.cuh"
#include "base/memory_budget.hpp"
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

__global__ void mark_core(const std::uint32_t* counts, const std::uint32_t* ids,
                          std::uint32_t positions, unsigned long long min_samples,
                          std::uint8_t* core, std::uint32_t* parent, std::uint32_t* min_core,
                          unsigned long long* pairs) {
  const std::uint64_t p = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  unsigned long long found = 0;
  if (p < positions) {
    const std::uint32_t id = ids[p];
    found = counts[p];
    const bool is_core = found + 1 >= min_samples;
    core[id] = is_core ? 1 : 0;
    parent[id] = is_core ? id : not_core;
    min_core[id] = none;
  }
  add_warp_total(pairs, found);
}

// Each point's cluster root, in place of its parent (a border point's is its smallest core
// neighbour's; a core point's root is its set's smallest member, so a cluster's root is its first
// core point, and clusters are numbered in that order, as scikit-learn numbers them); 1 in
// place of the smallest core neighbour for each root, for the scan that numbers the clusters;
// and the tallies of core, border and noise points and clusters. Finds start at and pass
// through core points only, and without halving: a halving could put back a stale ancestor
// after the point's own thread wrote its root, but a root written meanwhile is an ancestor too.
__device__ std::uint32_t root_without_halving(const std::uint32_t* parent, std::uint32_t x) {
  for (std::uint32_t p = load_parent(parent, x); p != x; p = load_parent(parent, x)) x = p;
  return x;
}

__global__ void find_clusters(std::uint32_t n, const std::uint8_t* core, std::uint32_t* parent,
                              std::uint32_t* min_core, unsigned long long* tally) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  int kind = -1;  // 0 core, 1 border, 2 noise
  bool is_root = false;
  if (i < n) {
    const auto id = static_cast<std::uint32_t>(i);
    std::uint32_t r = none;
    if (core[i] != 0) {
      r = root_without_halving(parent, id);
      kind = 0;
      is_root = r == id;
    } else if (min_core[i] != none) {
      r = root_without_halving(parent, min_core[i]);
      kind = 1;
    } else {
      kind = 2;
    }
    parent[i] = r;
    min_core[i] = is_root ? 1 : 0;
  }
  for (int k = 0; k < 3; ++k) {
    const unsigned votes = __ballot_sync(full_mask, kind == k);
    if ((threadIdx.x % warp_size) == 0 && votes != 0) atomicAdd(tally + k, __popc(votes));
  }
  const unsigned roots = __ballot_sync(full_mask, is_root);
  if ((threadIdx.x % warp_size) == 0 && roots != 0) atomicAdd(tally + 3, __popc(roots));
}

__global__ void write_labels(std::uint32_t n, const std::uint32_t* root,
                             const std::uint32_t* number, std::int64_t* labels) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t r = root[i];
  labels[i] = r == none ? -1 : static_cast<std::int64_t>(number[r]);
}

/// Arrays this small stay with the resources for the next call, so a small DBSCAN that the
/// caller repeats on one `resources` (Python's estimator does) allocates nothing.
constexpr std::uint64_t kept_arena_bytes = std::uint64_t{64} << 20;

/// The union-find the join links its pairs into, and the labels made from it.
class union_find_consumer final : public device_link_consumer {
 public:
  /// Labels `out`, whose arrays it sizes on a host thread while the device works (at 50M
  /// points, zeroing them takes 0.1 s or more).
  union_find_consumer(resources& res, std::size_t n, std::size_t min_samples, dbscan_result& out)
      : res_(res),
        n_(static_cast<std::uint32_t>(n)),
        min_samples_(min_samples),
        out_(out) {}

  ~union_find_consumer() override {
    if (gpu_ != nullptr && gpu_->point_arrays.capacity() > kept_arena_bytes) {
      gpu_->point_arrays.release();
    }
  }
  union_find_consumer(const union_find_consumer&) = delete;
  union_find_consumer& operator=(const union_find_consumer&) = delete;

  core_links take_counts(const std::uint32_t* counts, const std::uint32_t* ids,
                         std::uint32_t positions, CUstream_st* stream) override {
    EPSJOIN_ENSURE(positions == n_, error, "internal: DBSCAN's device merge got ", positions,
                   " query positions for ", n_, " points");
    counted_at_ = clock_.seconds();
    stream_ = stream;
    gpu_ = &acquire_gpu(res_);
    room_ = std::jthread([this] {
      out_.labels.resize(n_);
      out_.core.resize(n_);
    });
    carve_arrays();
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(tally_, 0, 5 * sizeof(unsigned long long), stream));
    mark_core<<<grid_size(n_, block), block, 0, stream>>>(counts, ids, n_, min_samples_, core_,
                                                          parent_, min_core_, tally_ + 4);
    EPSJOIN_CHECK_LAUNCH();
    return {parent_, min_core_};
  }

  bool took_counts() const { return stream_ != nullptr; }
  double counted_at() const { return counted_at_; }

  /// Labels and core flags into the result, with the tallies and the pairs the counting pass
  /// found.
  void label() {
    dbscan_result& r = out_;
    cudaStream_t stream = stream_;
    const unsigned blocks = grid_size(n_, block);
    find_clusters<<<blocks, block, 0, stream>>>(n_, core_, parent_, min_core_, tally_);
    EPSJOIN_CHECK_LAUNCH();
    std::uint32_t* number = min_core_;
    cub_call(gpu_->scratch, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(temp, bytes, number, number, n_, stream);
    });
    write_labels<<<blocks, block, 0, stream>>>(n_, parent_, number, labels_);
    EPSJOIN_CHECK_LAUNCH();
    room_.join();
    unsigned long long tally[5] = {};
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(r.labels.data(), labels_, sizeof(std::int64_t) * n_,
                                     cudaMemcpyDeviceToHost, stream));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(r.core.data(), core_, n_, cudaMemcpyDeviceToHost, stream));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(tally, tally_, sizeof tally, cudaMemcpyDeviceToHost,
                                     stream));
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
    r.n_core = tally[0];
    r.n_border = tally[1];
    r.n_noise = tally[2];
    r.n_clusters = tally[3];
    r.pairs = tally[4];
  }

 private:
  // The per-point arrays, carved from the resources' arena (grown within the budget when short):
  // parent (then the cluster roots) 4 bytes, smallest core neighbour (then the cluster numbers)
  // 4, label 8, core flag 1.
  void carve_arrays() {
    constexpr std::uint64_t align = 256;
    const auto rounded = [](std::uint64_t bytes) { return (bytes + align - 1) / align * align; };
    const std::uint64_t words = rounded(sizeof(std::uint32_t) * std::uint64_t{n_});
    const std::uint64_t bytes = 2 * words + rounded(sizeof(std::int64_t) * std::uint64_t{n_}) +
                                rounded(n_) + 5 * sizeof(unsigned long long);
    device_buffer<unsigned char>& arena = gpu_->point_arrays;
    if (arena.capacity() < bytes) {
      arena.release();
      const memory_budget budget(res_.memory(), {});
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
    labels_ = reinterpret_cast<std::int64_t*>(at + 2 * words);
    core_ = at + 2 * words + rounded(sizeof(std::int64_t) * std::uint64_t{n_});
    tally_ = reinterpret_cast<unsigned long long*>(core_ + rounded(n_));
  }

  resources& res_;
  gpu_state* gpu_ = nullptr;  // acquired with the counts: a join that cannot link runs nothing
  std::uint32_t n_;
  std::size_t min_samples_;
  dbscan_result& out_;
  stopwatch clock_;
  double counted_at_ = 0;
  cudaStream_t stream_ = nullptr;
  std::uint32_t* parent_ = nullptr;
  std::uint32_t* min_core_ = nullptr;
  std::int64_t* labels_ = nullptr;
  std::uint8_t* core_ = nullptr;
  /// core, border, noise, clusters, pairs
  unsigned long long* tally_ = nullptr;
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
  union_find_consumer merger(res, points.n, min_samples, r);
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
