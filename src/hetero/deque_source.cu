// hegjoin's work source for the row-join pipeline (deque_source.cuh).

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <exception>
#include <future>
#include <thread>

#include "base/cub_call.cuh"
#include "base/parallel.hpp"
#include "base/timer.hpp"
#include "hetero/deque_source.cuh"

namespace epsjoin::detail::hetero {

namespace {

constexpr unsigned gather_warps = 8;

/// Distances item i costs: its queries times the sizes of its cell's ranges, plus under halving
/// the rest of its own cell after each query (a warp per item). Sums to neighbor_ranges'
/// candidates, so the two sides' shares add up to the join's.
__global__ void item_candidates_kernel(const work_item* __restrict__ items, std::uint32_t n,
                                       const std::uint32_t* __restrict__ offsets,
                                       const point_range* __restrict__ ranges,
                                       const std::uint32_t* __restrict__ cell_begin, bool halving,
                                       std::uint64_t* __restrict__ out) {
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t i = blockIdx.x * gather_warps + threadIdx.x / 32;
  if (i >= n) return;
  const work_item item = items[i];
  std::uint64_t sum = 0;
  for (std::uint32_t r = offsets[item.cell] + lane; r < offsets[item.cell + 1]; r += 32) {
    sum += ranges[r].end - ranges[r].begin;
  }
  for (int step = 16; step > 0; step /= 2) sum += __shfl_down_sync(0xffffffffu, sum, step);
  if (lane != 0) return;
  std::uint64_t own = 0;
  if (halving) {
    // Query first + t compares with the cell_end - (first + t) - 1 points after it.
    const std::uint64_t after_first = cell_begin[item.cell + 1] - item.first - 1;
    const std::uint64_t c = item.count;
    own = c * after_first - c * (c - 1) / 2;
  }
  out[i] = sum * item.count + own;
}

/// Ranges of items [lo, lo + n): how many each has (under halving, one more: its own cell).
__global__ void item_range_counts_kernel(const work_item* __restrict__ items, std::uint32_t lo,
                                         std::uint32_t n, const std::uint32_t* __restrict__ offsets,
                                         bool halving, std::uint32_t* __restrict__ counts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t cell = items[lo + i].cell;
  counts[i] = offsets[cell + 1] - offsets[cell] + (halving ? 1 : 0);
}

/// Ranges of items [lo, lo + n), item after item, to out + at[i] (a warp per item); under
/// halving each item's list ends with its own cell after its first query, as the GPU's
/// kernels enumerate it (candidate_range).
__global__ void gather_ranges_kernel(const work_item* __restrict__ items, std::uint32_t lo,
                                     std::uint32_t n, const std::uint32_t* __restrict__ offsets,
                                     const point_range* __restrict__ ranges,
                                     const std::uint32_t* __restrict__ cell_begin, bool halving,
                                     const std::uint64_t* __restrict__ at,
                                     point_range* __restrict__ out) {
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t i = blockIdx.x * gather_warps + threadIdx.x / 32;
  if (i >= n) return;
  const work_item item = items[lo + i];
  const std::uint32_t first = offsets[item.cell], count = offsets[item.cell + 1] - first;
  for (std::uint32_t r = lane; r < count; r += 32) out[at[i] + r] = ranges[first + r];
  if (halving && lane == 0) out[at[i] + count] = {item.first + 1, cell_begin[item.cell + 1]};
}

}  // namespace

template <class T>
hetero::host_join_view<T> host_index<T>::view(int d, T eps2, bool self_join, bool halving) const {
  hetero::host_join_view<T> v;
  v.halving = halving;
  v.items = items;
  v.query_points = query_points;
  v.query_ids = query_ids;
  v.data_points = self_join ? std::span<const T>(query_points) : std::span<const T>(data_points);
  v.data_ids = self_join ? std::span<const std::uint32_t>(query_ids)
                         : std::span<const std::uint32_t>(data_ids);
  v.d = d;
  v.eps2 = eps2;
  v.self_join = self_join;
  return v;
}

namespace {

/// Copies between the device and pageable host memory through one pinned chunk, on one stream.
/// The driver's own pageable copies hold up every other thread's CUDA calls while they last: with
/// 8 MB of ids copied that way beside the GPU's batches, its count kernels took 15-27 ms where
/// lbjoin's took 4 ms (Expo4D 2M).
class staged_copies {
 public:
  // Allocated (pinned) on the counting phase's critical path the first time, at about 0.4 ms a
  // megabyte: two 8 MB chunks took 6-9 ms there; a piece's extra round trip costs microseconds.
  static constexpr std::size_t chunk_bytes = std::size_t{1} << 20;

  // CPU workers copy through it from threads of their own, whose current device is device 0
  // until set: each copy makes the stream's device current first (several-GPU joins).
  staged_copies(pinned_buffer<unsigned char>& chunk, cudaStream_t stream, int device)
      : chunk_(chunk), stream_(stream), device_(device) {
    chunk_.reserve(chunk_bytes);
  }

  /// Stops between pieces, leaving `out` partly written, once `abandon` is set (when given).
  template <class U, class V = U, class A>
  void to_host(std::vector<V, A>& out, const U* device, std::size_t n,
               const std::atomic<bool>* abandon = nullptr) {
    static_assert(sizeof(U) == sizeof(V));
    out.resize(n);
    auto* to = reinterpret_cast<unsigned char*>(out.data());
    const auto* from = reinterpret_cast<const unsigned char*>(device);
    EPSJOIN_CUDA_TRY(cudaSetDevice(device_));
    for (std::size_t at = 0, bytes = n * sizeof(U); at < bytes; at += chunk_.capacity()) {
      if (abandon != nullptr && abandon->load(std::memory_order_relaxed)) return;
      const std::size_t piece = std::min(chunk_.capacity(), bytes - at);
      EPSJOIN_CUDA_TRY(
          cudaMemcpyAsync(chunk_.data(), from + at, piece, cudaMemcpyDeviceToHost, stream_));
      EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream_));
      std::memcpy(to + at, chunk_.data(), piece);
    }
  }

  template <class U>
  void to_device(U* device, const U* host, std::size_t n) {
    auto* to = reinterpret_cast<unsigned char*>(device);
    const auto* from = reinterpret_cast<const unsigned char*>(host);
    EPSJOIN_CUDA_TRY(cudaSetDevice(device_));
    for (std::size_t at = 0, bytes = n * sizeof(U); at < bytes; at += chunk_.capacity()) {
      const std::size_t piece = std::min(chunk_.capacity(), bytes - at);
      std::memcpy(chunk_.data(), from + at, piece);
      EPSJOIN_CUDA_TRY(
          cudaMemcpyAsync(to + at, chunk_.data(), piece, cudaMemcpyHostToDevice, stream_));
      EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream_));  // before the chunk is filled again
    }
  }

 private:
  pinned_buffer<unsigned char>& chunk_;
  cudaStream_t stream_;
  int device_;
};

}  // namespace

template <class T, class A>
void gather_host_points(const dataset_view& rows, std::span<const std::uint32_t> permutation,
                        std::span<const int> dim_order, unsigned threads,
                        const std::atomic<bool>& abandon, std::vector<T, A>& out) {
  const std::size_t n = permutation.size(), d = rows.d;
  EPSJOIN_EXPECTS(dim_order.size() == d, "the plan orders ", dim_order.size(), " dimensions of ",
                  d);
  out.resize(n * d);
  auto gather = [&]<class In>(const In* in) {
    parallel_for(threads, n, 8192, [&](std::size_t b, std::size_t e, unsigned) {
      if (abandon.load(std::memory_order_relaxed)) return;
      for (std::size_t p = b; p < e; ++p) {
        const In* row = in + static_cast<std::size_t>(permutation[p]) * d;
        for (std::size_t c = 0; c < d; ++c) out[p * d + c] = static_cast<T>(row[dim_order[c]]);
      }
    });
  };
  if (rows.type == scalar_type::f64) {
    gather(static_cast<const double*>(rows.data));
  } else {
    gather(static_cast<const float*>(rows.data));
  }
}

template <class T>
double count_with_cpu(split_join<T>& cpu, host_index<T>& host,
                      const row_join::count_context<T>& ctx) {
  gpu_state& gpu = ctx.gpu;
  const grid::device_index<T>& queries = ctx.queries;
  const grid::device_index<T>& data = ctx.data;
  const neighbor_ranges& ranges = ctx.ranges;
  const work_item* ordered = ctx.items;
  const std::uint32_t n_items = ctx.n_items;
  const join_view<T>& view = ctx.view;
  const bool halving = ctx.halving;
  const host_sources sources{ctx.query_rows, ctx.data_rows, ctx.dim_order, ctx.threads};
  const row_join::count_launcher& count = ctx.count;
  join_stats& stats = ctx.stats;
  stopwatch phase;
  static_assert(sizeof(hetero::host_item) == sizeof(work_item) &&
                sizeof(hetero::host_range) == sizeof(point_range));
  const std::array<cudaStream_t, 2> streams = {gpu.slots[0]->stream.get(),
                                               gpu.slots[1]->stream.get()};
  // The CPU side's kernels and copies (its items' candidates, the ids, its range windows) run
  // beside the count batches, which fill every SM: a high-priority stream lets their few blocks
  // go before the batches' pending ones. (Not measured on its own: it came in with the loading
  // below, which was what held them back.)
  int least_priority = 0, greatest_priority = 0;
  EPSJOIN_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority));
  const cuda_stream side_stream(greatest_priority);
  cudaStream_t copies = side_stream.get();
  // Loaded now: under CUDA's lazy module loading (the default), a kernel's first launch loads
  // its module, which waits for the kernels running on the device. Launched first beside the
  // batches, the CPU side's kernels ran only after the last one (device run 7: Expo8D 2M at eps
  // 0.0178, the items' candidates were ready at 257 ms, with the GPU's batches done at 263 ms).
  for (const void* kernel : {reinterpret_cast<const void*>(&item_candidates_kernel),
                             reinterpret_cast<const void*>(&item_range_counts_kernel),
                             reinterpret_cast<const void*>(&gather_ranges_kernel)}) {
    cudaFuncAttributes attributes{};
    EPSJOIN_CUDA_TRY(cudaFuncGetAttributes(&attributes, kernel));
  }
  // The index was built on the first stream; the copies run beside the first batches.
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(streams[0]));
  const double index_wait = phase.seconds();
  const bool self = view.self_join && &queries == &data;
  EPSJOIN_EXPECTS(!halving || self, "hegjoin halves self-joins only");
  const std::uint32_t* cell_begin = queries.cell_begin.data();
  // Two pinned chunks, allocated before the batches start: this thread's copies go through one,
  // the CPU workers' range fetches through the other.
  staged_copies own_copies(gpu.upload_chunks[0], copies, gpu.device);
  staged_copies fetch_copies(gpu.upload_chunks[1], copies, gpu.device);
  const double staging_seconds = phase.seconds();
  // Called by CPU workers (one at a time) while the GPU counts on its own streams.
  auto fetch = [&fetch_copies, ordered, &ranges, cell_begin, halving, copies](
                   std::uint32_t lo, std::uint32_t hi, std::vector<hetero::host_range>& out,
                   std::vector<std::uint32_t>& counts) {
    cudaStream_t on = copies;
    const std::uint32_t n = hi - lo;
    counts.assign(n, 0);
    out.clear();
    if (n == 0) return;
    stream_scratch<std::uint32_t> device_counts(n, on);
    item_range_counts_kernel<<<grid_size(n, 256), 256, 0, on>>>(
        ordered, lo, n, ranges.offsets.data(), halving, device_counts.data());
    EPSJOIN_CHECK_LAUNCH();
    fetch_copies.to_host(counts, device_counts.data(), n);
    std::vector<std::uint64_t> at(n);
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      at[i] = total;
      total += counts[i];
    }
    if (total == 0) return;
    stream_scratch<std::uint64_t> device_at(n, on);
    stream_scratch<point_range> gathered(total, on);
    fetch_copies.to_device(device_at.data(), at.data(), n);
    gather_ranges_kernel<<<grid_size(n, gather_warps), gather_warps * 32, 0, on>>>(
        ordered, lo, n, ranges.offsets.data(), ranges.ranges.data(), cell_begin, halving,
        device_at.data(), gathered.data());
    EPSJOIN_CHECK_LAUNCH();
    fetch_copies.to_host<point_range, hetero::host_range>(out, gathered.data(), total);
  };

  // The items and their candidates on the host: what the deque needs to split a static
  // partition, and what the CPU side joins.
  std::atomic<bool> abandon{false};
  auto copy_workload = [&](const std::atomic<bool>* stop) {
    own_copies.to_host<work_item, hetero::host_item>(host.items, ordered, n_items, stop);
    if (n_items == 0 || (stop != nullptr && stop->load())) return;
    stream_scratch<std::uint64_t> candidates(n_items, copies);
    item_candidates_kernel<<<grid_size(n_items, gather_warps), gather_warps * 32, 0, copies>>>(
        ordered, n_items, ranges.offsets.data(), ranges.ranges.data(), cell_begin, halving,
        candidates.data());
    EPSJOIN_CHECK_LAUNCH();
    own_copies.to_host(host.candidates, candidates.data(), n_items, stop);
  };

  // What only the CPU side needs is made on a thread of its own once the GPU's first batch is
  // out: under dynamic partitioning the items and candidates too (the GPU's batches are then cut
  // by item count), then the ids (the index's permutations, from the device) and the point
  // copies, gathered from the caller's rows on the host as the device index gathered them (same
  // order, same conversion). The workers start the moment all is done. Made on this thread
  // before the first batch, they held the GPU back 23-51 ms in every join (Expo 2-8-D 2M), where
  // the GPU counts everything in 3-260 ms. When the GPU has emptied the deque first, they are not
  // made, or abandoned (between copies and gathered blocks).
  cuda_event start, end;
  std::array<cuda_event, 2> done;
  std::promise<bool> planned;
  std::exception_ptr start_error;
  const bool early = cpu.dynamic();
  // The starter's steps, for the notes: how far it came, and when (seconds into the phase).
  std::string cpu_steps;
  auto step = [&](const char* what) {
    cpu_steps += concat(cpu_steps.empty() ? "" : ", ", what, " ", phase.seconds());
  };
  std::thread starter([&, planned_future = planned.get_future()]() mutable {
    try {
      auto wanted = [&] { return cpu.has_workers() && !abandon.load() && cpu.cpu_work_left(); };
      if (!planned_future.get()) return;
      step("released");
      if (!wanted()) return;
      if (early) {
        copy_workload(&abandon);
        step("items");
        if (!wanted()) return;
        cpu.workload(host.items, host.candidates);
      }
      own_copies.to_host(host.query_ids, queries.permutation.data(), queries.n_points, &abandon);
      if (!self && wanted()) {
        own_copies.to_host(host.data_ids, data.permutation.data(), data.n_points, &abandon);
      }
      step("ids");
      if (!wanted()) return;
      gather_host_points(sources.queries, host.query_ids, sources.dim_order, sources.threads,
                         abandon, host.query_points);
      if (!self) {
        gather_host_points(sources.data, host.data_ids, sources.dim_order, sources.threads, abandon,
                           host.data_points);
      }
      step("points");
      if (!wanted()) return;
      cpu.start(host.view(view.d, view.eps2, self, halving), fetch);
      step("started");
    } catch (...) {
      start_error = std::current_exception();
    }
  });

  std::array<bool, 2> busy{};
  std::array<std::uint32_t, 2> batch_end{};
  bool released = false;  // the starter may go on (the first batch is out, or there is none)
  auto release = [&](bool go) {
    if (released) return;
    released = true;
    planned.set_value(go);
  };
  double setup_seconds = 0;
  try {
    if (early) {
      cpu.plan_dynamic(n_items, queries.n_points, ranges.candidates,
                       static_cast<unsigned>(streams.size()));
    } else {
      copy_workload(nullptr);
      cpu.plan(host.items, host.candidates, static_cast<unsigned>(streams.size()));
    }
    setup_seconds = phase.seconds();
    start.record(streams[0]);
    EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(streams[1], start.get(), 0));
    for (unsigned b = 0;; ++b) {
      const unsigned k = b % streams.size();
      // A batch is taken only when a stream is free for it, so the GPU never holds more of the
      // deque than it is about to work on.
      if (busy[k]) {
        EPSJOIN_CUDA_TRY(cudaEventSynchronize(done[k].get()));
        // The batch before it, on the other stream, was waited for when this one was issued.
        cpu.gpu_progress(batch_end[k]);
      }
      const hetero::item_range r = cpu.next_gpu_batch();
      if (r.empty()) break;
      count(ordered + r.begin, r.size(), streams[k]);
      done[k].record(streams[k]);
      busy[k] = true;
      batch_end[k] = r.end;
      release(true);
    }
    release(true);
  } catch (...) {
    // The workers read `host`, which the caller is about to free.
    abandon = true;
    release(false);
    starter.join();
    cpu.stop();
    throw;
  }
  const double batches_end = phase.seconds();
  if (!cpu.cpu_work_left()) abandon = true;
  starter.join();
  if (start_error) {
    cpu.stop();
    std::rethrow_exception(start_error);
  }
  EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(streams[0], done[1].get(), 0));
  end.record(streams[0]);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(streams[0]));
  cpu.gpu_finished();
  cpu.wait();
  stats.notes.push_back(
      {"counting phase",
       concat("set-up ", setup_seconds, " s (waiting for the index ", index_wait,
              " s, pinned staging ", staging_seconds - index_wait, " s), GPU batches ",
              batches_end - setup_seconds, " s, CPU side's steps at (s) [", cpu_steps,
              "], CPU side done after ", phase.seconds() - batches_end, " s more",
              cpu.started() ? "" : " (not started: the GPU took everything)")});
  return end.since(start) * 1e-3;
}

std::vector<work_item> gpu_fill_items(std::span<const hetero::host_item> items,
                                      std::uint32_t gpu_items,
                                      std::span<const row_segment> segments,
                                      std::vector<std::uint32_t>& item_begin) {
  // Segment of each item by its first position; items whose rows are all empty may lie in no
  // segment (plan_segments drops empty ones) and need no fill.
  std::vector<std::uint32_t> per_segment(segments.size() + 1, 0);
  std::vector<std::int64_t> segment_of(gpu_items, -1);
  for (std::uint32_t i = 0; i < gpu_items; ++i) {
    const std::uint32_t first = items[i].first;
    const auto it =
        std::upper_bound(segments.begin(), segments.end(), first,
                         [](std::uint32_t p, const row_segment& s) { return p < s.first; });
    if (it == segments.begin()) continue;
    const auto k = static_cast<std::size_t>(it - segments.begin()) - 1;
    if (first >= segments[k].end) continue;
    segment_of[i] = static_cast<std::int64_t>(k);
    ++per_segment[k + 1];
  }
  item_begin.assign(segments.size() + 1, 0);
  for (std::size_t k = 0; k < segments.size(); ++k)
    item_begin[k + 1] = item_begin[k] + per_segment[k + 1];
  std::vector<work_item> out(item_begin.back());
  std::vector<std::uint32_t> next(item_begin.begin(), item_begin.end() - 1);
  for (std::uint32_t i = 0; i < gpu_items; ++i) {
    if (segment_of[i] < 0) continue;
    const hetero::host_item& h = items[i];
    out[next[static_cast<std::size_t>(segment_of[i])]++] = work_item{h.first, h.count, h.cell};
  }
  return out;
}

template struct host_index<float>;
template struct host_index<double>;
template <class T>
std::vector<work_item> deque_source<T>::device_fill_items(
    std::span<const row_segment> segments, std::vector<std::uint32_t>& item_begin) const {
  return gpu_fill_items(host_.items, split_.gpu_items(), segments, item_begin);
}

template <class T>
double deque_source<T>::count(const row_join::count_context<T>& ctx) {
  return count_with_cpu(split_, host_, ctx);
}

template class deque_source<float>;
template class deque_source<double>;

}  // namespace epsjoin::detail::hetero
