#include "base/cuda_check.cuh"
#include "base/expects.hpp"
#include "cuda_tensor/split_kernels.cuh"

namespace epsjoin::detail::hetero {

namespace {

__global__ void item_work_kernel(const std::uint32_t* range_offsets, const point_range* ranges,
                                 const row_join::work_item* items, std::uint32_t n_items,
                                 std::uint64_t* work) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_items) return;
  const row_join::work_item item = items[i];
  std::uint64_t candidates = 0;
  for (std::uint32_t r = range_offsets[item.cell]; r < range_offsets[item.cell + 1]; ++r) {
    candidates += ranges[r].end - ranges[r].begin;
  }
  work[i] = candidates * item.count;
}

}  // namespace

std::vector<std::uint64_t> item_work(const std::uint32_t* range_offsets, const point_range* ranges,
                                     const row_join::work_item* items, std::uint32_t n_items,
                                     cudaStream_t stream) {
  std::vector<std::uint64_t> work(n_items);
  if (n_items == 0) return work;
  device_buffer<std::uint64_t> per_item(n_items);
  constexpr unsigned threads = 256;
  item_work_kernel<<<(n_items + threads - 1) / threads, threads, 0, stream>>>(
      range_offsets, ranges, items, n_items, per_item.data());
  EPSJOIN_CUDA_TRY(cudaGetLastError());
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(work.data(), per_item.data(), n_items * sizeof(std::uint64_t),
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return work;
}

namespace {

void upload(device_buffer<row_join::work_item>& to, const std::vector<row_join::work_item>& from,
            cudaStream_t stream) {
  if (from.empty()) return;
  to.reserve(from.size());
  // From pageable memory: the call returns once `from` is staged, so it may go out of scope.
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(to.data(), from.data(),
                                   from.size() * sizeof(row_join::work_item),
                                   cudaMemcpyHostToDevice, stream));
}

}  // namespace

template <class T>
void split_kernels<T>::launch(const row_join::join_view<T>& view, const row_join::work_item* items,
                              std::uint32_t n_items, const row_join::row_output& out,
                              row_join::pass p, const row_join::launch_config& config,
                              cudaStream_t stream) {
  EPSJOIN_EXPECTS(config.queue == nullptr, "cuda-tensor's two kernels cannot share one queue");
  EPSJOIN_EXPECTS(!config.halving, "cuda-tensor runs the full pattern only");
  if (n_items == 0) return;
  const std::vector<std::uint64_t> work =
      item_work(view.range_offsets, view.ranges, items, n_items, stream);
  std::vector<row_join::work_item> host(n_items);
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(host.data(), items, n_items * sizeof(row_join::work_item),
                                   cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  if (!cells_chosen_) {
    EPSJOIN_ENSURE(p == row_join::pass::count, error,
                   "internal: cuda-tensor fills before it counted");
    if (fixed_share_ < 0) probe(view, host, work, out, config, stream);
    // design=warps divides each cell's items between the kinds (launch_warps), not the cells.
    if (!(design_ == split_design::warps && one_kernel(view.d))) choose_cells(host, work);
    cells_chosen_ = true;
  }
  if (design_ == split_design::warps && one_kernel(view.d)) {
    launch_warps(view, host, work, out, p, stream);
    return;
  }
  // Each side's items in the launch's order (heaviest first within a segment).
  std::vector<row_join::work_item> to_tensor, to_cuda;
  std::uint64_t tensor_work = 0, cuda_work = 0;
  for (std::uint32_t i = 0; i < n_items; ++i) {
    if (on_tensor(host[i].cell)) {
      to_tensor.push_back(host[i]);
      tensor_work += work[i];
    } else {
      to_cuda.push_back(host[i]);
      cuda_work += work[i];
    }
  }
  // The stream has waited for the last launch's both sides (below), so their lists are free.
  upload(tensor_items_, to_tensor, stream);
  upload(cuda_items_, to_cuda, stream);
  if (one_kernel(view.d)) {
    launch_fused(view, static_cast<std::uint32_t>(to_tensor.size()), tensor_work,
                 static_cast<std::uint32_t>(to_cuda.size()), cuda_work, out, p, stream);
    return;
  }

  cudaStream_t side = design_ == split_design::one_stream ? stream : side_.get();
  fork_.record(stream);
  EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(side, fork_.get(), 0));
  tensor_start_.record(stream);
  if (!to_tensor.empty()) {
    tensor_.launch(view, tensor_items_.data(), static_cast<std::uint32_t>(to_tensor.size()), out, p,
                   config, stream);
  }
  tensor_end_.record(stream);
  cuda_start_.record(side);
  if (!to_cuda.empty()) {
    cuda_.launch(view, cuda_items_.data(), static_cast<std::uint32_t>(to_cuda.size()), out, p,
                 config, side);
  }
  cuda_end_.record(side);
  EPSJOIN_CUDA_TRY(cudaStreamWaitEvent(stream, cuda_end_.get(), 0));
  if (p == row_join::pass::count) {
    // The pipeline reads the counts right after this pass: waiting costs nothing and lets the
    // events be read.
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
    timing_.tensor_candidates += tensor_work;
    timing_.cuda_candidates += cuda_work;
    timing_.tensor_seconds += tensor_end_.since(tensor_start_) / 1e3;
    timing_.cuda_seconds += cuda_end_.since(cuda_start_) / 1e3;
    const double tensor_done = tensor_end_.since(fork_), cuda_done = cuda_end_.since(fork_);
    timing_.both_seconds += std::max(tensor_done, cuda_done) / 1e3;
  }
}

template <class T>
void split_kernels<T>::reset_clocks(cudaStream_t stream) {
  one_kernel_ran_ = true;
  if (clocks_.data() == nullptr) clocks_.reserve(1);
  // From pageable memory: the call returns once `unset` is staged.
  const side_clocks unset{~0ull, 0, ~0ull, 0};
  EPSJOIN_CUDA_TRY(
      cudaMemcpyAsync(clocks_.data(), &unset, sizeof unset, cudaMemcpyHostToDevice, stream));
}

template <class T>
void split_kernels<T>::add_clocks(std::uint64_t tensor_work, std::uint64_t cuda_work,
                                  cudaStream_t stream) {
  side_clocks stamps{};
  EPSJOIN_CUDA_TRY(
      cudaMemcpyAsync(&stamps, clocks_.data(), sizeof stamps, cudaMemcpyDeviceToHost, stream));
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  const auto span = [](unsigned long long start, unsigned long long end) {
    return end > start ? static_cast<double>(end - start) * 1e-9 : 0.0;
  };
  timing_.tensor_candidates += tensor_work;
  timing_.cuda_candidates += cuda_work;
  timing_.tensor_seconds += span(stamps.tensor_start, stamps.tensor_end);
  timing_.cuda_seconds += span(stamps.cuda_start, stamps.cuda_end);
  timing_.both_seconds += span(std::min(stamps.tensor_start, stamps.cuda_start),
                               std::max(stamps.tensor_end, stamps.cuda_end));
}

template <class T>
void split_kernels<T>::launch_fused(const row_join::join_view<T>& view, std::uint32_t n_tensor,
                                    std::uint64_t tensor_work, std::uint32_t n_cuda,
                                    std::uint64_t cuda_work, const row_join::row_output& out,
                                    row_join::pass p, cudaStream_t stream) {
  reset_clocks(stream);
  launch_fused_blocks<T>(view, tensor_.view(), tensor_items_.data(), n_tensor, cuda_items_.data(),
                         n_cuda, out, p, cuda_stage_dims_,
                         design_ == split_design::blocks_interleaved ? block_order::interleaved
                                                                     : block_order::tensor_first,
                         clocks_.data(), stream);
  if (p == row_join::pass::count) add_clocks(tensor_work, cuda_work, stream);
}

template <class T>
void split_kernels<T>::launch_warps(const row_join::join_view<T>& view,
                                    const std::vector<row_join::work_item>& host,
                                    const std::vector<std::uint64_t>& work,
                                    const row_join::row_output& out, row_join::pass p,
                                    cudaStream_t stream) {
  if (kinds_.empty()) {
    // Fixed at the first launch, like the cells of the other designs: the kinds entered in
    // kinds_ assume this many tensor warps a block.
    tensor_warps_ = tensor_warps_for(model_.share, row_join::warps_per_block);
    kinds_.assign(std::max<std::uint32_t>(n_queries_, 1), item_kind::unset);
  }
  const warp_tasks<row_join::work_item> tasks = build_warp_tasks<row_join::work_item>(
      host, work, tensor_warps_, row_join::warps_per_block, kinds_);
  const std::uint32_t n_tasks = tasks.tasks();
  if (n_tasks == 0) return;
  // Copied in stream order, after the last launch has read the buffers; from pageable memory,
  // so the calls return once the vectors are staged.
  slots_.reserve(tasks.slots.size());
  shared_cell_.reserve(n_tasks);
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(slots_.data(), tasks.slots.data(),
                                   tasks.slots.size() * sizeof(row_join::work_item),
                                   cudaMemcpyHostToDevice, stream));
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(shared_cell_.data(), tasks.shared_cell.data(),
                                   n_tasks * sizeof(std::uint32_t), cudaMemcpyHostToDevice,
                                   stream));
  reset_clocks(stream);
  launch_shared_tiles<T>(view, tensor_.view(), slots_.data(), shared_cell_.data(), n_tasks,
                         tensor_warps_, out, p, cuda_stage_dims_, clocks_.data(), stream);
  if (p == row_join::pass::count) {
    tasks_ += n_tasks;
    shared_tasks_ += tasks.shared_tasks;
    busy_slots_ += tasks.busy_slots;
    add_clocks(tasks.tensor_work, tasks.cuda_work, stream);
  }
}

template <class T>
void split_kernels<T>::choose_cells(const std::vector<row_join::work_item>& host,
                                    const std::vector<std::uint64_t>& work) {
  std::uint32_t cells = 0;
  for (const row_join::work_item& item : host) cells = std::max(cells, item.cell + 1);
  tensor_cell_.assign(cells, 0);
  if (model_.share <= 0) return;
  std::vector<std::uint64_t> cell_work(cells, 0), cell_queries(cells, 0);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    cell_work[host[i].cell] += work[i];
    cell_queries[host[i].cell] += host[i].count;
    total += work[i];
  }
  std::vector<std::uint32_t> order(cells);
  for (std::uint32_t c = 0; c < cells; ++c) order[c] = c;
  // Heaviest work a query first: where the tensor cores' tiles are fullest.
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const double wa =
        cell_queries[a] == 0 ? 0.0 : static_cast<double>(cell_work[a]) / cell_queries[a];
    const double wb =
        cell_queries[b] == 0 ? 0.0 : static_cast<double>(cell_work[b]) / cell_queries[b];
    return wa != wb ? wa > wb : a < b;
  });
  const double wanted = model_.share * static_cast<double>(total);
  std::uint64_t taken = 0;
  for (const std::uint32_t c : order) {
    if (model_.share < 1 && static_cast<double>(taken) >= wanted) break;
    tensor_cell_[c] = 1;
    taken += cell_work[c];
  }
}

template <class T>
void split_kernels<T>::probe(const row_join::join_view<T>& view,
                             const std::vector<row_join::work_item>& all,
                             const std::vector<std::uint64_t>& work,
                             const row_join::row_output& out, const row_join::launch_config& config,
                             cudaStream_t stream) {
  const auto n_items = static_cast<std::uint32_t>(work.size());
  // Evenly through the workload order, so heavy and light items are both in it.
  const std::uint32_t stride = std::max<std::uint32_t>(1, n_items / std::max(1u, probe_items_));
  std::vector<row_join::work_item> sample;
  std::uint64_t candidates = 0;
  for (std::uint32_t i = stride / 2; i < n_items; i += stride) {
    sample.push_back(all[i]);
    candidates += work[i];
  }
  device_buffer<row_join::work_item> sample_items(sample.size());
  EPSJOIN_CUDA_TRY(cudaMemcpyAsync(sample_items.data(), sample.data(),
                                   sample.size() * sizeof(row_join::work_item),
                                   cudaMemcpyHostToDevice, stream));
  device_buffer<std::uint32_t> scratch(std::max<std::uint32_t>(n_queries_, 1));
  row_join::row_output scratch_out = out;
  scratch_out.counts = scratch.data();
  scratch_out.records = nullptr;
  scratch_out.record_count = nullptr;
  scratch_out.record_capacity = 0;
  const auto n_sample = static_cast<std::uint32_t>(sample.size());
  // One item each first: the kernels' first launches load their modules, which is not work.
  tensor_.launch(view, sample_items.data(), 1, scratch_out, row_join::pass::count, config, stream);
  cuda_.launch(view, sample_items.data(), 1, scratch_out, row_join::pass::count, config, stream);
  tensor_start_.record(stream);
  tensor_.launch(view, sample_items.data(), n_sample, scratch_out, row_join::pass::count, config,
                 stream);
  tensor_end_.record(stream);
  cuda_start_.record(stream);
  cuda_.launch(view, sample_items.data(), n_sample, scratch_out, row_join::pass::count, config,
               stream);
  cuda_end_.record(stream);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  const double tensor_seconds = tensor_end_.since(tensor_start_) / 1e3;
  const double cuda_seconds = cuda_end_.since(cuda_start_) / 1e3;
  model_.probed = true;
  model_.probe_items = n_sample;
  model_.probe_candidates = candidates;
  model_.tensor_rate = static_cast<double>(candidates) / std::max(tensor_seconds, 1e-9);
  model_.cuda_rate = static_cast<double>(candidates) / std::max(cuda_seconds, 1e-9);
  model_.share =
      candidates == 0 ? 1.0 : model_.tensor_rate / (model_.tensor_rate + model_.cuda_rate);
}

template <class T>
std::string split_kernels<T>::kernel_note() const {
  constexpr const char* tensor_code = "meta-16q's FP16 x FP16 -> FP32 m16n8k16 tiles";
  constexpr const char* cuda_code = "lbjoin's tiled CUDA-core";
  if (!one_kernel_ran_) {
    const bool one_stream = design_ == split_design::one_stream;
    return concat("split: ", tensor_code, " kernel on the heaviest items, ", cuda_code,
                  " kernel on the rest, ",
                  one_stream ? "one after the other" : "on two streams at once",
                  one_stream || design_ == split_design::two_streams
                      ? std::string()
                      : concat(" (the design of one kernel runs from ", fused_min_dims,
                               design_ == split_design::warps ? concat(" to ", warps_max_dims)
                                                              : std::string(),
                               " dimensions)"));
  }
  if (design_ == split_design::warps) {
    return concat("split: one kernel whose blocks hold warps of both kinds, ", tensor_code,
                  " warps and ", cuda_code,
                  " warps; a block's items of one cell share each tile of 32 candidates in "
                  "shared memory; each side timed by its warps' own stamps");
  }
  return concat("split: one kernel of two kinds of blocks (",
                design_ == split_design::blocks_interleaved ? "interleaved" : "tensor blocks first",
                "), ", tensor_code, " warps on the heaviest items, ", cuda_code,
                " warps on the rest; each side timed by its blocks' own stamps");
}

template <class T>
void split_kernels<T>::report(join_stats& stats, std::uint64_t /*pairs*/) {
  const split_timing& t = timing_;
  stats.notes.push_back({"kernel", kernel_note()});
  if (design_ == split_design::warps && one_kernel_ran_) {
    stats.notes.push_back(
        {"split warps",
         concat(tensor_warps_, " tensor and ", row_join::warps_per_block - tensor_warps_,
                " CUDA-core warps a block; counting pass: ", tasks_, " tasks, ", shared_tasks_,
                " of them on one cell's shared tiles; ",
                tasks_ == 0 ? 0.0
                            : 100.0 * static_cast<double>(busy_slots_) /
                                  static_cast<double>(tasks_ * row_join::warps_per_block),
                "% of the warps busy")});
  }
  if (model_.probed) {
    stats.notes.push_back(
        {"split model",
         concat("probe of ", model_.probe_items, " items (", model_.probe_candidates,
                " candidates), each kernel alone: tensor cores ", model_.tensor_rate,
                " candidates/s, CUDA cores ", model_.cuda_rate, " candidates/s; share ",
                model_.share, " of the candidates to the tensor cores")});
    const double modelled = std::max(static_cast<double>(t.tensor_candidates) / model_.tensor_rate,
                                     static_cast<double>(t.cuda_candidates) / model_.cuda_rate);
    stats.notes.push_back({"split modelled seconds", concat(modelled)});
  } else {
    stats.notes.push_back(
        {"split model",
         concat("share ", model_.share, " of the candidates to the tensor cores (split=)")});
  }
  stats.notes.push_back({"split measured seconds", concat(t.both_seconds)});
  stats.notes.push_back(
      {"split tensor", concat(t.tensor_candidates, " candidates in ", t.tensor_seconds, " s")});
  stats.notes.push_back(
      {"split cuda", concat(t.cuda_candidates, " candidates in ", t.cuda_seconds, " s")});
  // 2 when the two kernels ran entirely at once, 1 when one waited for the other.
  const double busy = t.tensor_seconds + t.cuda_seconds;
  stats.notes.push_back(
      {"split overlap", concat(t.both_seconds > 0 ? busy / t.both_seconds : 0.0)});
}

template class split_kernels<float>;
template class split_kernels<double>;

}  // namespace epsjoin::detail::hetero
