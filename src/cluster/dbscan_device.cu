// DBSCAN's merge on the device (dbscan_device.hpp). The union-find is the host merge's
// (union_find.hpp) on the GPU, in the style of ECL-CC: every link goes from a root to a smaller
// root by one atomicCAS that holds only while the linked node is still a root, so each set's
// root is its smallest core point whatever order the rows are read in; finds halve their path
// with plain stores, which is safe because only roots are ever linked (a non-root's entry can
// only be pointed further up by anyone, so a stale halving still writes an ancestor).

#include "cluster/dbscan_device.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <thread>

#include "base/cub_call.cuh"
#include "base/gpu_state.cuh"
#include "base/memory.cuh"
#include "base/memory_budget.hpp"
#include "base/timer.hpp"
#include "core/device_rows.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin::detail {

namespace {

/// The parent entry of a point that is not core: it is in no set.
constexpr std::uint32_t not_core = UINT32_MAX;
/// A point's smallest core neighbour before any is found; also "no cluster" for noise.
constexpr std::uint32_t none = UINT32_MAX;
constexpr unsigned block = 256;
constexpr unsigned warp_size = 32;
constexpr unsigned full_mask = 0xffffffffu;
/// Device bytes a point: core flag 1, parent 4, smallest core neighbour (later the cluster
/// numbers) 4, cluster root 4, the cluster's first core point 4, label 8.
constexpr std::uint64_t device_bytes_per_point = 25;

// Other threads link and halve concurrently: every read goes to memory.
__device__ std::uint32_t load(const std::uint32_t* parent, std::uint32_t x) {
  return *reinterpret_cast<const volatile std::uint32_t*>(parent + x);
}

__device__ std::uint32_t find_root(std::uint32_t* parent, std::uint32_t x) {
  std::uint32_t p = load(parent, x);
  while (p != x) {
    const std::uint32_t g = load(parent, p);
    if (g == p) return p;
    *reinterpret_cast<volatile std::uint32_t*>(parent + x) = g;
    x = g;
    p = load(parent, x);
  }
  return x;
}

__device__ void unite(std::uint32_t* parent, std::uint32_t a, std::uint32_t b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  while (a != b) {
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t seen = atomicCAS(parent + b, b, a);
    if (seen == b) return;
    // b was linked meanwhile: start again from both roots.
    a = find_root(parent, a);
    b = find_root(parent, seen);
  }
}

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

// A warp per row: a core query unites with its core neighbours of larger id (the smaller one's
// row carries the pair) and lowers its non-core neighbours' smallest core neighbour; the rows
// of non-core queries carry nothing the other direction does not and are skipped whole.
__global__ void merge_rows(device_row_segment rows, std::uint32_t* parent,
                           std::uint32_t* min_core) {
  const unsigned lane = threadIdx.x % warp_size;
  const std::uint64_t warps = std::uint64_t{gridDim.x} * blockDim.x / warp_size;
  for (std::uint64_t p = rows.first + (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) /
                                          warp_size;
       p < rows.end; p += warps) {
    const std::uint32_t q = rows.ids[p];
    if (load(parent, q) == not_core) continue;
    // A root of q's set, possibly stale: a neighbour that reaches it is in q's set already (sets
    // only grow), which settles most core pairs with the one load that tells core from not.
    std::uint32_t q_root = find_root(parent, q);
    const std::uint64_t end = rows.row_offset[p + 1] - rows.begin;
    for (std::uint64_t k = rows.row_offset[p] - rows.begin + lane; k < end; k += warp_size) {
      const std::uint32_t j = rows.neighbors[k];
      const std::uint32_t j_parent = load(parent, j);
      if (j_parent == not_core) {
        atomicMin(min_core + j, q);
      } else if (q < j && j_parent != q_root && find_root(parent, j_parent) != q_root) {
        unite(parent, q, j);
        q_root = find_root(parent, q);
      }
    }
  }
}

// Each point's cluster root (a border point's is its smallest core neighbour's), each
// cluster's first core point (clusters are numbered in their order, as scikit-learn numbers
// them), and the tallies of core, border and noise points.
__global__ void find_clusters(std::uint32_t n, const std::uint8_t* core, std::uint32_t* parent,
                              const std::uint32_t* min_core, std::uint32_t* root,
                              std::uint32_t* first, unsigned long long* tally) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  int kind = -1;  // 0 core, 1 border, 2 noise
  if (i < n) {
    std::uint32_t r = none;
    if (core[i] != 0) {
      r = find_root(parent, static_cast<std::uint32_t>(i));
      kind = 0;
    } else if (min_core[i] != none) {
      r = find_root(parent, min_core[i]);
      kind = 1;
    } else {
      kind = 2;
    }
    root[i] = r;
    if (kind == 0) atomicMin(first + r, static_cast<std::uint32_t>(i));
  }
  for (int k = 0; k < 3; ++k) {
    const unsigned votes = __ballot_sync(full_mask, kind == k);
    if ((threadIdx.x % warp_size) == 0 && votes != 0) atomicAdd(tally + k, __popc(votes));
  }
}

// 1 for the first core point of each cluster, counting the clusters.
__global__ void flag_firsts(std::uint32_t n, const std::uint32_t* root, const std::uint32_t* first,
                            std::uint32_t* flag, unsigned long long* clusters) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  bool is_first = false;
  if (i < n) {
    is_first = root[i] != none && first[root[i]] == i;
    flag[i] = is_first ? 1 : 0;
  }
  const unsigned votes = __ballot_sync(full_mask, is_first);
  if ((threadIdx.x % warp_size) == 0 && votes != 0) atomicAdd(clusters, __popc(votes));
}

__global__ void write_labels(std::uint32_t n, const std::uint32_t* root, const std::uint32_t* first,
                             const std::uint32_t* number, std::int64_t* labels) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t r = root[i];
  labels[i] = r == none ? -1 : static_cast<std::int64_t>(number[first[r]]);
}

/// The union-find over the rows the join leaves on the device.
class union_find_consumer final : public device_row_consumer {
 public:
  /// Labels `out`, whose arrays it sizes on a host thread while the device works (at 50M
  /// points, zeroing them takes 0.1 s or more).
  union_find_consumer(resources& res, std::size_t n, std::size_t min_samples, dbscan_result& out)
      : res_(res), n_(static_cast<std::uint32_t>(n)), min_samples_(min_samples), out_(out) {}

  void take_counts(const std::uint32_t* counts, const std::uint32_t* ids, std::uint32_t positions,
                   CUstream_st* stream) override {
    EPSJOIN_ENSURE(positions == n_, error, "internal: DBSCAN's device merge got ", positions,
                   " query positions for ", n_, " points");
    counted_at_ = clock_.seconds();
    stream_ = stream;
    room_ = std::jthread([this] {
      out_.labels.resize(n_);
      out_.core.resize(n_);
    });
    const memory_budget budget(res_.memory(), {});
    std::size_t free = 0, total = 0;
    EPSJOIN_CUDA_TRY(cudaMemGetInfo(&free, &total));
    const std::uint64_t needed = device_bytes_per_point * n_;
    EPSJOIN_ENSURE(needed <= budget.device_bytes(free), out_of_memory, "DBSCAN's device merge of ",
                   n_, " points needs ", needed, " bytes of device memory beside the join but ",
                   budget.device_bytes(free),
                   " are available: raise the device memory limit or use fewer points");
    core_.reserve(n_);
    parent_.reserve(n_);
    min_core_.reserve(n_);
    tally_.reserve(5);
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(tally_.data(), 0, 5 * sizeof(unsigned long long), stream));
    mark_core<<<grid_size(n_, block), block, 0, stream>>>(counts, ids, n_, min_samples_,
                                                          core_.data(), parent_.data(),
                                                          min_core_.data(), tally_.data() + 4);
    EPSJOIN_CHECK_LAUNCH();
  }

  void take_rows(const device_row_segment& rows, CUstream_st* stream) override {
    if (rows.end <= rows.first) return;
    const std::uint64_t threads = std::uint64_t{rows.end - rows.first} * warp_size;
    const auto grid = static_cast<unsigned>(std::min<std::uint64_t>(
        (threads + block - 1) / block, std::uint64_t{1} << 30));
    merge_rows<<<grid, block, 0, stream>>>(rows, parent_.data(), min_core_.data());
    EPSJOIN_CHECK_LAUNCH();
  }

  bool took_counts() const { return stream_ != nullptr; }
  double counted_at() const { return counted_at_; }

  /// Labels and core flags into the result, with the tallies and the pairs the counting pass
  /// found.
  void label() {
    dbscan_result& r = out_;
    gpu_state& gpu = acquire_gpu(res_);
    cudaStream_t stream = stream_;
    const unsigned blocks = grid_size(n_, block);
    const device_buffer<std::uint32_t> root(n_), first(n_);
    const device_buffer<std::int64_t> labels(n_);
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(first.data(), 0xff, sizeof(std::uint32_t) * n_, stream));
    find_clusters<<<blocks, block, 0, stream>>>(n_, core_.data(), parent_.data(), min_core_.data(),
                                                root.data(), first.data(), tally_.data());
    EPSJOIN_CHECK_LAUNCH();
    // The smallest core neighbours are read; their room takes the cluster numbers.
    std::uint32_t* number = min_core_.data();
    flag_firsts<<<blocks, block, 0, stream>>>(n_, root.data(), first.data(), number,
                                              tally_.data() + 3);
    EPSJOIN_CHECK_LAUNCH();
    cub_call(gpu.scratch, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(temp, bytes, number, number, n_, stream);
    });
    write_labels<<<blocks, block, 0, stream>>>(n_, root.data(), first.data(), number,
                                               labels.data());
    EPSJOIN_CHECK_LAUNCH();
    room_.join();
    unsigned long long tally[5] = {};
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(r.labels.data(), labels.data(), sizeof(std::int64_t) * n_,
                                     cudaMemcpyDeviceToHost, stream));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(r.core.data(), core_.data(), n_, cudaMemcpyDeviceToHost,
                                     stream));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(tally, tally_.data(), sizeof tally, cudaMemcpyDeviceToHost,
                                     stream));
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
    r.n_core = tally[0];
    r.n_border = tally[1];
    r.n_noise = tally[2];
    r.n_clusters = tally[3];
    r.pairs = tally[4];
  }

 private:
  resources& res_;
  std::uint32_t n_;
  std::size_t min_samples_;
  dbscan_result& out_;
  stopwatch clock_;
  double counted_at_ = 0;
  cudaStream_t stream_ = nullptr;
  device_buffer<std::uint8_t> core_;
  device_buffer<std::uint32_t> parent_, min_core_;
  /// core, border, noise, clusters, pairs
  device_buffer<unsigned long long> tally_;
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
                 "internal: the device-rows join of ", points.n, " points gave no counts");
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
