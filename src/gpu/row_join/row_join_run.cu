// The row-join pipeline's stages (row_join_run.cuh).

#include <algorithm>

#include "gpu/row_join/caller_ids.cuh"
#include "gpu/row_join/row_join_run.cuh"
#include "grid/device_plan.cuh"
#include "results/handover.hpp"

namespace epsjoin::detail::row_join {

namespace {

/// Hits the counting pass may record: at most `bound` (the candidates), and no more than leaves
/// room in the budget for the table beside them (8 bytes a record, 4 an id). 0 when that is too
/// few to bother.
std::uint64_t record_capacity(std::uint64_t bound, const memory_budget& budget) {
  std::size_t free = 0, total = 0;
  EPSJOIN_CUDA_TRY(cudaMemGetInfo(&free, &total));
  const std::uint64_t room = budget.device_bytes(free) / 12;
  const std::uint64_t segment_ids = budget.overrides().segment_ids;
  // A forced segment size (tests) forces as small a record buffer, so records overflow.
  if (segment_ids > 0) return std::min({bound, room, segment_ids});
  const std::uint64_t capacity = std::min(bound, room);
  return capacity < (std::uint64_t{1} << 16) && capacity < bound ? 0 : capacity;
}

}  // namespace

template <class T>
row_join_run<T>::row_join_run(join_request& req, const row_join_params& settings,
                              row_join_kernel<T>& kernel, work_source<T>& source, bool shared)
    : req_(req),
      settings_(settings),
      kernel_(kernel),
      source_(source),
      shared_(shared),
      gpu_(acquire_gpu(req.res)),
      stream_(gpu_.slots[0]->stream.get()),
      out_(req.sink, req.res.threads()),
      queue_(1),
      record_count_(1) {
  base_config_.persistent_blocks =
      static_cast<unsigned>(gpu_.properties.multiProcessorCount) *
      std::max(1u,
               static_cast<unsigned>(gpu_.properties.maxThreadsPerMultiProcessor) / block_threads);
}

template <class T>
void row_join_run<T>::build_index() {
  // Rows that cross the link to the host go through the pinned ring: its first pinning runs
  // beside the index and the counts instead of before the rows.
  if (out_.form() == delivery_form::rows && req_.device_links == nullptr &&
      !req_.sink.request().device_table) {
    ring_reserved_ = reserve_row_ring(gpu_, req_.queries.n, req_.budget);
  }
  grid::plan_options popt;
  popt.eps = req_.options.eps;
  popt.max_k = settings_.index_dims;
  popt.reorder = settings_.index_dims > 0 || kernel_.orders_dimensions();
  plan_ = grid::plan_grid_for(gpu_, stream_, req_.data, popt, req_.res.threads());
  req_.stats.add_stage("plan", clock_.seconds());

  clock_.restart();
  indexes_ = build_join_indexes<T>(gpu_, stream_, req_, plan_);
  halving_ranges_ = req_.self_join && settings_.lid_unicomp;
  ranges_ = find_neighbor_ranges(
      gpu_, stream_, queries(), data_index(),
      halving_ranges_ ? grid::access_pattern::lid_unicomp : grid::access_pattern::full,
      req_.self_join);
  work_ = build_items(gpu_, stream_, queries().cell_begin.data(), queries().n_cells, ranges_,
                      halving_ranges_, kernel_.item_queries(), kernel_.workload_lanes());
  // Position order needs no copy: the list is built in it.
  if (settings_.sort) sorted_items_ = order_items(gpu_, stream_, work_, {}, true);
  ordered_ = settings_.sort ? sorted_items_.data() : work_.items.data();
  req_.stats.candidates = ranges_.candidates;
  if (req_.item_share != nullptr) {
    req_.item_share->honoured = true;
    req_.item_share->items = work_.n;
    req_.item_share->candidates = ranges_.candidates;
  }
  set_written_ids();
  view_ = {queries().points.data(),
           queries().cell_begin.data(),
           data_index().points.data(),
           written_ids_,
           ranges_.offsets.data(),
           ranges_.ranges.data(),
           data_index().d,
           static_cast<T>(req_.options.eps) * static_cast<T>(req_.options.eps),
           req_.self_join};
  nq_ = queries().n_points;
  prepare_kernel();
  req_.stats.add_stage("index", clock_.seconds());
}

// The ids the kernels write as neighbours: the points' own, or the caller's where a device of a
// multi-device join writes its rows into the caller's table (join_request::caller_ids).
template <class T>
void row_join_run<T>::set_written_ids() {
  written_ids_ = data_index().permutation.data();
  const sink_request& wanted = req_.sink.request();
  if (!req_.caller_ids.empty() && req_.self_join && wanted.rows_in_place &&
      !wanted.counts_only() && req_.device_links == nullptr) {
    caller_ids_ = compose_caller_ids(gpu_, stream_, data_index().permutation.data(),
                                     data_index().n_points, req_.caller_ids);
    written_ids_ = caller_ids_.data();
    req_.caller_ids_written = true;
  }
}

template <class T>
void row_join_run<T>::prepare_kernel() {
  index_summary summary;
  summary.one_cell = queries().n_cells <= 1 && data_index().n_cells <= 1;
  summary.dim_order = plan_.dim_order;
  summary.candidates = ranges_.candidates;
  summary.all_pairs = halving_ranges_ ? std::uint64_t{nq_} * (nq_ - (nq_ > 0 ? 1 : 0)) / 2
                                      : std::uint64_t{nq_} * data_index().n_points;
  kernel_.prepare(gpu_, stream_, view_, nq_, data_index().n_points, summary);
}

template <class T>
void row_join_run<T>::launch(const join_view<T>& view, const work_item* items,
                             std::uint32_t n_items, const row_output& out, pass p, bool halving,
                             cudaStream_t on) {
  if (n_items == 0) return;
  launch_config config = base_config_;
  config.halving = halving;
  config.queue = settings_.queue ? queue_.data() : nullptr;
  if (settings_.queue) EPSJOIN_CUDA_TRY(cudaMemsetAsync(queue_.data(), 0, sizeof(unsigned), on));
  kernel_.launch(view, items, n_items, out, p, config, on);
}

template <class T>
void row_join_run<T>::count() {
  clock_.restart();
  const double kernel_seconds = run_count_pass();
  choose_layout();
  if (count_out_.records != nullptr) {
    EPSJOIN_CUDA_TRY(
        cudaMemcpy(&recorded_, record_count_.data(), sizeof recorded_, cudaMemcpyDeviceToHost));
  }
  req_.stats.add_stage("count", clock_.seconds());
  report_count(kernel_seconds);
}

template <class T>
double row_join_run<T>::run_count_pass() {
  counts_.reserve(std::max<std::uint32_t>(nq_, 1));
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(counts_.data(), 0, sizeof(std::uint32_t) * nq_, stream_));
  count_out_.counts = counts_.data();
  count_out_.query_ids = query_ids();
  reserve_records();
  const count_launcher count_items = [&](const work_item* items, std::uint32_t n,
                                         cudaStream_t on) {
    launch(view_, items, n, count_out_, pass::count, halving_ranges_, on);
  };
  const unsigned threads = std::max(1u, req_.res.threads() > 1 ? req_.res.threads() - 1 : 1);
  const double kernel_seconds = source_.count(
      {gpu_, queries(), data_index(), ranges_, ordered_, work_.n, work_.items.data(),
       kernel_.takes_any_items(), view_, halving_ranges_, req_.self_join ? req_.data : req_.queries,
       req_.data, plan_.dim_order, threads, count_items, req_.stats});
  // Whether any pair was found elsewhere: if not (the device took every item, or the others'
  // were all empty), the rows are the device's alone, without the per-position passes.
  found_elsewhere_ = source_.found_elsewhere();
  if (req_.device_links != nullptr) {
    EPSJOIN_ENSURE(!shared_ && req_.self_join, error,
                   "internal: linking on the device is for a self-join with every item there");
    links_ =
        req_.device_links->take_counts(counts_.data(), queries().permutation.data(), nq_, stream_);
    EPSJOIN_ENSURE(static_cast<bool>(links_), error,
                   "internal: the device-links consumer gave no union-find");
  }
  return kernel_seconds;
}

// Recording the hits during the count lets the rows be filled by a scatter instead of a second
// pass over every candidate: worth it where candidates far outnumber results (d >= 6: Expo8D
// 2M, the fill kernels took as long as the count).
template <class T>
void row_join_run<T>::reserve_records() {
  const fill_mode fill = settings_.fill;
  // A linking fill keeps nothing a pair: records would be the table it does without.
  const bool want_records =
      kernel_.can_record() && !req_.sink.request().counts_only() && req_.device_links == nullptr &&
      (fill == fill_mode::records || (fill == fill_mode::automatic && view_.d >= 6));
  if (!want_records) return;
  const std::uint64_t capacity =
      record_capacity(ranges_.candidates * (halving_ranges_ ? 2 : 1), req_.budget);
  if (capacity == 0) return;
  gpu_.records.reserve(capacity);
  count_out_.records = gpu_.records.data();
  count_out_.record_capacity = gpu_.records.capacity();
  count_out_.record_count = record_count_.data();
  EPSJOIN_CUDA_TRY(
      cudaMemsetAsync(record_count_.data(), 0, sizeof(unsigned long long), stream_));
}

// Rows of the device's alone, in a table that fits on the device, are laid out there in query
// order (query_rows.cuh); otherwise per position on the host. A sink that keeps only the number
// of pairs, and a linking fill, which keeps no row, get the device's sum: at 100M points,
// copying and laying out every query's count on the host took longer than a 2-D count kernel.
template <class T>
void row_join_run<T>::choose_layout() {
  const bool linking = req_.device_links != nullptr;
  if (out_.form() == delivery_form::rows && !found_elsewhere_ && !linking) {
    by_query_ = lay_out_by_query(gpu_, counts_.data(), queries().permutation.data(), nq_,
                                 static_cast<std::uint32_t>(req_.queries.n), stream_);
    if (segment_capacity(by_query_->total, req_.budget) < by_query_->total) by_query_.reset();
  }
  const std::optional<std::size_t> total_below =
      linking ? std::optional<std::size_t>(nq_)
              : found_elsewhere_ ? std::nullopt : out_.total_only_below();
  if (total_below) {
    totals_ = sum_row_counts(counts_.data(), queries().permutation.data(), nq_, *total_below,
                             stream_);
  }
  if (!by_query_ && !totals_) {
    rc_ = fetch_row_counts(counts_.data(), queries().permutation.data(), nq_, stream_);
  }
  total_ = by_query_ ? by_query_->total : totals_ ? totals_->all : rc_.offsets.back();
}

template <class T>
void row_join_run<T>::report_count(double kernel_seconds) {
  req_.stats.notes.push_back({"count kernel seconds", concat(kernel_seconds)});
  req_.stats.notes.push_back(
      {"configuration", concat(settings_.summary, "; ", work_.n, " work items; ",
                               data_index().n_cells, " non-empty cells; ", plan_.reason)});
  kernel_.report(req_.stats, total_);
  source_.report(req_.stats);
}

template <class T>
void row_join_run<T>::deliver_counts() {
  if (totals_) {
    out_.total(totals_->below);
  } else if (!found_elsewhere_) {
    out_.counts(rc_.ids, rc_.counts);
  } else {
    // Under halving a row's count has the device's part and the rest.
    row_counts both = rc_;
    const std::vector<std::uint32_t> elsewhere = source_.counts_elsewhere(nq_);
    for (std::uint32_t p = 0; p < nq_; ++p) both.counts[p] += elsewhere[p];
    out_.counts(both.ids, both.counts);
  }
}

template <class T>
bool row_join_run<T>::plan_fill() {
  clock_.restart();
  // A linking fill is one launch over every item: nothing it writes is a row.
  const bool one_segment = by_query_ || req_.device_links != nullptr;
  segments_ = !one_segment
                  ? plan_segments(rc_, work_.host_first, segment_capacity(total_, req_.budget))
              : total_ > 0 ? std::vector<row_segment>{{0, nq_, 0, total_}}
                           : std::vector<row_segment>{};
  // The records fill the rows when they all fit and the table is one segment.
  scatter_fill_ = count_out_.records != nullptr && segments_.size() == 1 &&
                  recorded_ <= count_out_.record_capacity && recorded_ == total_;
  if (count_out_.records != nullptr) {
    req_.stats.notes.push_back(
        {"fill", scatter_fill_ ? concat("scattered ", recorded_, " recorded hits")
                               : concat("second pass (", recorded_, " hits for ",
                                        count_out_.record_capacity, " records, ",
                                        segments_.size(), " segments)")});
  }
  // Halving writes both directions, and the reverse row may lie in another segment.
  halving_fill_ = halving_ranges_ && segments_.size() <= 1;
  if (shared_ && halving_ranges_ && !halving_fill_) {
    // The FULL fill would write, in the device's rows, the pairs found elsewhere and written
    // there too; nothing has reached the sink yet, so the caller can start again with full.
    req_.stats.notes.push_back({"pattern", concat("lid-unicomp's GPU rows need ",
                                                  segments_.size(),
                                                  " segments; the join is re-run with full")});
    return false;
  }
  plan_fill_items();
  if ((halving_fill_ || scatter_fill_) && !links_) {
    cursor_.reserve(std::max<std::uint32_t>(nq_, 1));
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(cursor_.data(), 0, sizeof(std::uint32_t) * nq_, stream_));
  }
  req_.stats.add_stage("plan rows", clock_.seconds());
  return true;
}

// The fill's ranges, view and items, and where each segment's items start (item_begin_).
template <class T>
void row_join_run<T>::plan_fill_items() {
  const work_list* fill_work = &work_;
  fill_view_ = view_;
  if (halving_ranges_ && !halving_fill_) {
    req_.stats.notes.push_back({"pattern",
                                "lid-unicomp fills only a single segment; the fill "
                                "used full (the counts are the same)"});
    full_ranges_ = find_neighbor_ranges(gpu_, stream_, queries(), data_index(),
                                        grid::access_pattern::full, req_.self_join);
    full_work_ = build_items(gpu_, stream_, queries().cell_begin.data(), queries().n_cells,
                             full_ranges_, false, kernel_.item_queries(),
                             kernel_.workload_lanes());
    fill_view_.range_offsets = full_ranges_.offsets.data();
    fill_view_.ranges = full_ranges_.ranges.data();
    fill_work = &full_work_;
  }
  std::vector<std::uint32_t> segment_first;
  for (const row_segment& seg : segments_) segment_first.push_back(seg.first);
  item_begin_.assign(segments_.size() + 1, 0);
  const std::uint32_t device_items = source_.device_items(work_.n);
  if (shared_ && segments_.size() == 1) {
    // Only the device's items, a prefix of the workload order (the other rows, or under halving
    // the other part of each row, have no room in the device layout).
    item_begin_[1] = device_items;
  } else if (device_items < work_.n) {
    // (When the device took every item, the fill is the plain one, below.)
    const std::vector<work_item> own = source_.device_fill_items(segments_, item_begin_);
    fill_items_.reserve(std::max<std::size_t>(own.size(), 1));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(fill_items_.data(), own.data(),
                                     sizeof(work_item) * own.size(), cudaMemcpyHostToDevice,
                                     stream_));
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream_));
  } else {
    if (segments_.size() > 1 || fill_work != &work_) {
      fill_items_ = order_items(gpu_, stream_, *fill_work, segment_first, settings_.sort);
    }
    const std::vector<std::uint32_t>& firsts = fill_work->host_first;
    for (std::size_t k = 0; k < segments_.size(); ++k) {
      const auto lo = std::lower_bound(firsts.begin(), firsts.end(), segments_[k].first);
      const auto hi = std::lower_bound(firsts.begin(), firsts.end(), segments_[k].end);
      item_begin_[k + 1] = item_begin_[k] + static_cast<std::uint32_t>(hi - lo);
    }
  }
  items_ = fill_items_.data() != nullptr ? fill_items_.data() : ordered_;
}

template <class T>
void row_join_run<T>::fill_segment(std::size_t k, const row_segment& seg,
                                   std::uint32_t* neighbors, const std::uint64_t* row_offset,
                                   cudaStream_t on) {
  if (scatter_fill_) {
    scatter_records(gpu_.records.data(), recorded_, row_offset, seg.begin, cursor_.data(),
                    neighbors, on);
    return;
  }
  row_output out;
  out.neighbors = neighbors;
  out.row_offset = row_offset;
  out.segment_begin = seg.begin;
  out.cursor = cursor_.data();
  out.query_ids = query_ids();
  out.links = links_;
  launch(halving_fill_ ? view_ : fill_view_, items_ + item_begin_[k],
         item_begin_[k + 1] - item_begin_[k], out, pass::fill, halving_fill_, on);
}

// The whole linking fill, one launch on the counting pass's stream.
template <class T>
void row_join_run<T>::link_on_device() {
  stopwatch clock;
  cuda_event start, end;
  start.record(stream_);
  if (!segments_.empty()) fill_segment(0, segments_.front(), nullptr, nullptr, stream_);
  end.record(stream_);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream_));
  req_.stats.add_stage("fill+link on device", clock.seconds());
  req_.stats.notes.push_back({"fill+link kernel seconds", concat(end.since(start) * 1e-3)});
  if (req_.options.progress) req_.options.progress(1.0);
}

// The fill kernels run on the counting pass's stream.
template <class T>
void row_join_run<T>::fill_and_deliver() {
  const segment_filler fill = [this](std::size_t k, const row_segment& seg,
                                     std::uint32_t* neighbors, const std::uint64_t* row_offset,
                                     cudaStream_t on) {
    fill_segment(k, seg, neighbors, row_offset, on);
  };
  const bool self_slots = req_.self_join && req_.options.include_self;
  const std::function<void(double)>& progress = req_.options.progress;
  if (ring_reserved_.valid()) ring_reserved_.get();
  if (links_) {
    link_on_device();
  } else if (by_query_ && req_.sink.request().device_table) {
    hand_device_table(req_.sink,
                      fill_device_table(gpu_, *by_query_, fill, self_slots, req_.stats));
  } else if (by_query_) {
    run_query_rows(gpu_, *by_query_, fill, out_, self_slots, req_.budget, req_.stats, progress);
  } else if (!found_elsewhere_) {
    run_row_segments(gpu_, rc_, segments_, req_.queries.n, fill, out_, req_.budget, req_.stats,
                     progress);
  } else {
    const std::vector<std::uint32_t> elsewhere = source_.counts_elsewhere(nq_);
    rows_beside beside{elsewhere, {}};
    run_row_segments(gpu_, rc_, segments_, req_.queries.n, fill, out_, req_.budget, req_.stats,
                     progress, &beside);
    clock_.restart();
    source_.deliver_elsewhere(out_, rc_.counts, req_.res.threads());
    req_.stats.add_stage("cpu rows", clock_.seconds());
  }
}

template class row_join_run<float>;
template class row_join_run<double>;

}  // namespace epsjoin::detail::row_join
