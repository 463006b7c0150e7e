// The row-join pipeline (row_join.cuh): count, lay out, fill in place.

#include <algorithm>
#include <optional>

#include "batch/device_rows.cuh"
#include "batch/query_rows.cuh"
#include "core/timer.hpp"
#include "gpu/join_indexes.cuh"
#include "gpu/row_join/caller_ids.cuh"
#include "gpu/row_join/row_join.cuh"
#include "gpu/row_join/work_items.cuh"
#include "grid/device_plan.cuh"
#include "grid/plan.hpp"
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

// One device's share of the items when several devices count one join whole (work_share):
// items index, index + count, ... of the workload order, in one launch; the sink adds up the
// devices' counts. Counts only: the device never fills rows, so nothing needs its items to be
// a prefix of the order. A kernel that compares the span of positions its items cover with
// every point (takes_any_items() false) gets the index-th of count equal runs of the position
// order instead: its cost is the span's length, so equal runs are equal work.
template <class T>
class share_source final : public work_source<T> {
 public:
  explicit share_source(const work_share& share) : share_(share) {}
  double count(const count_context<T>& ctx) override {
    cudaStream_t stream = ctx.gpu.slots[0]->stream.get();
    std::uint32_t n_taken = 0;
    device_buffer<work_item> taken;
    const work_item* mine = nullptr;
    if (ctx.takes_any_items) {
      taken = take_share(ctx.items, ctx.n_items, share_.index, share_.count, n_taken, stream);
      mine = taken.data();
    } else {
      const auto run_start = [&](std::uint64_t k) {
        return static_cast<std::uint32_t>(std::uint64_t{ctx.n_items} * k / share_.count);
      };
      mine = ctx.position_items + run_start(share_.index);
      n_taken = run_start(share_.index + 1) - run_start(share_.index);
      runs_ = true;
    }
    cuda_event start, end;
    start.record(stream);
    ctx.count(mine, n_taken, stream);
    end.record(stream);
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
    return end.since(start) * 1e-3;
  }
  void report(join_stats& stats) const override {
    stats.notes.push_back(
        {"work share",
         runs_ ? concat("run ", share_.index, " of ", share_.count, " of the position order")
               : concat("items ", share_.index, ", ", share_.index, " + ", share_.count,
                        ", ... of the workload order")});
  }

 private:
  const work_share& share_;
  bool runs_ = false;
};

}  // namespace

template <class T>
double work_source<T>::count(const count_context<T>& ctx) {
  cudaStream_t stream = ctx.gpu.slots[0]->stream.get();
  cuda_event start, end;
  start.record(stream);
  ctx.count(ctx.items, ctx.n_items, stream);
  end.record(stream);
  EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  return end.since(start) * 1e-3;
}

template <class T>
std::vector<work_item> work_source<T>::device_fill_items(std::span<const row_segment> /*segments*/,
                                                         std::vector<std::uint32_t>& /*begin*/) const {
  throw error("internal: a work source that gives the device only part of the items must say "
              "which fill items are its own");
}

row_join_params read_row_join_params(param_reader& r, bool brute_force_mode, bool takes_queue) {
  using kind = param_kind;
  row_join_params s;
  s.sort = r.on_off("sort", kind::ablation, "work items heaviest first (SORTBYWL)", true);
  if (takes_queue) {
    s.queue = r.on_off("queue", kind::ablation,
                       "persistent warps take items from an atomic counter (WORKQUEUE)", false);
  }
  // LID-UNICOMP by default: it halves the distances, which is what counts once d >= 4 (Expo8D
  // 2M: 0.39 s against 0.63 s with full), and costs nothing measurable at d = 2.
  s.lid_unicomp = r.choice("pattern", kind::ablation,
                           "lid-unicomp (self-joins: each distance once, both rows written) | "
                           "full",
                           {"full", "lid-unicomp"}, "lid-unicomp") == "lid-unicomp";
  const std::string fill =
      r.choice("fill", kind::ablation,
               "auto | records (hits recorded while counting) | second-pass (distances again)",
               {"auto", "records", "second-pass"}, "auto");
  s.fill = fill == "records"       ? fill_mode::records
           : fill == "second-pass" ? fill_mode::second_pass
                                   : fill_mode::automatic;
  // As many indexed dimensions as the grid allows (8): fewer candidates beat the longer
  // neighbour-cell walk (Expo8D 2M at eps 0.0178: 0.91 s indexing 8 against 1.21 s indexing 6;
  // Expo16D 1M at eps 0.0396: 1.41 s against 1.61 s).
  s.index_dims = static_cast<int>(r.uint("index_dims", kind::tuning,
                                         "1 to 8: most dimensions the grid indexes (default 8)",
                                         grid::max_indexed_dims, 1, grid::max_indexed_dims));
  r.memory_override("segment_ids");
  r.memory_override("chunk_ids");
  bool brute = false;
  if (brute_force_mode) {
    brute = r.choice("mode", kind::ablation, "indexed | brute-force (no index: every pair)",
                     {"indexed", "brute-force"}, "indexed") == "brute-force";
    EPSJOIN_EXPECTS(!brute || !r.has("index_dims"),
                    "parameter index_dims means nothing with mode=brute-force (no index)");
    if (brute) s.index_dims = 0;
  }
  s.summary = concat(brute ? "brute force, " : "", "sort ", s.sort ? "on" : "off", ", queue ",
                     s.queue ? "on" : "off", ", pattern ", s.lid_unicomp ? "lid-unicomp" : "full");
  return s;
}

template <class T>
row_join_result run_row_join(join_request& req, const row_join_params& s,
                             row_join_kernel<T>& kernel, work_source<T>* source) {
  work_source<T> every_item;
  std::optional<share_source<T>> share;
  if (req.item_share != nullptr) {
    EPSJOIN_EXPECTS(source == nullptr && req.sink.request().counts_only() &&
                        req.device_rows == nullptr,
                    "internal: a share of the items is for a counts-only join on the device alone");
    source = &share.emplace(*req.item_share);
  }
  const bool shared = source != nullptr;
  if (source == nullptr) source = &every_item;
  EPSJOIN_EXPECTS(source->allows_queue() || !s.queue,
                  "this join's work source hands out the items itself: it needs queue=off");
  gpu_state& gpu = acquire_gpu(req.res);
  cudaStream_t stream = gpu.slots[0]->stream.get();
  launch_config base_config;
  base_config.persistent_blocks =
      static_cast<unsigned>(gpu.properties.multiProcessorCount) *
      std::max(1u,
               static_cast<unsigned>(gpu.properties.maxThreadsPerMultiProcessor) / block_threads);

  stopwatch clock;
  grid::plan_options popt;
  popt.eps = req.options.eps;
  popt.max_k = s.index_dims;
  popt.reorder = s.index_dims > 0 || kernel.orders_dimensions();
  const grid::grid_plan plan = grid::plan_grid_for(gpu, stream, req.data, popt, req.res.threads());
  req.stats.add_stage("plan", clock.seconds());

  clock.restart();
  const join_indexes<T> indexes = build_join_indexes<T>(gpu, stream, req, plan);
  const grid::device_index<T>& data_index = indexes.data;
  const grid::device_index<T>& queries = indexes.queries();
  const bool halving_ranges = req.self_join && s.lid_unicomp;
  const neighbor_ranges ranges = find_neighbor_ranges(
      gpu, stream, queries, data_index,
      halving_ranges ? grid::access_pattern::lid_unicomp : grid::access_pattern::full,
      req.self_join);
  const unsigned chunk = kernel.item_queries();
  const work_list work = build_items(gpu, stream, queries.cell_begin.data(), queries.n_cells,
                                     ranges, halving_ranges, chunk, kernel.workload_lanes());
  // Position order needs no copy: the list is built in it.
  device_buffer<work_item> sorted_items;
  if (s.sort) sorted_items = order_items(gpu, stream, work, {}, true);
  const work_item* ordered = s.sort ? sorted_items.data() : work.items.data();
  req.stats.candidates = ranges.candidates;
  if (req.item_share != nullptr) {
    req.item_share->honoured = true;
    req.item_share->items = work.n;
    req.item_share->candidates = ranges.candidates;
  }

  // The ids the kernels write as neighbours: the points' own, or the caller's where a device of
  // a multi-device join writes its rows into the caller's table (join_request::caller_ids).
  device_buffer<std::uint32_t> caller_ids;
  const std::uint32_t* written_ids = data_index.permutation.data();
  if (!req.caller_ids.empty() && req.self_join && req.sink.request().rows_in_place &&
      !req.sink.request().counts_only() && req.device_rows == nullptr) {
    caller_ids = compose_caller_ids(gpu, stream, data_index.permutation.data(),
                                    data_index.n_points, req.caller_ids);
    written_ids = caller_ids.data();
    req.caller_ids_written = true;
  }
  const join_view<T> view{queries.points.data(),
                          queries.cell_begin.data(),
                          data_index.points.data(),
                          written_ids,
                          ranges.offsets.data(),
                          ranges.ranges.data(),
                          data_index.d,
                          static_cast<T>(req.options.eps) * static_cast<T>(req.options.eps),
                          req.self_join};
  const std::uint32_t nq = queries.n_points;
  index_summary summary;
  summary.one_cell = queries.n_cells <= 1 && data_index.n_cells <= 1;
  summary.dim_order = plan.dim_order;
  summary.candidates = ranges.candidates;
  summary.all_pairs = halving_ranges ? std::uint64_t{nq} * (nq - (nq > 0 ? 1 : 0)) / 2
                                     : std::uint64_t{nq} * data_index.n_points;
  kernel.prepare(gpu, stream, view, nq, data_index.n_points, summary);
  req.stats.add_stage("index", clock.seconds());
  device_buffer<unsigned> queue(1);
  auto launch = [&](const join_view<T>& v, const work_item* items, std::uint32_t n_items,
                    const row_output& out, pass p, bool halving, cudaStream_t on) {
    if (n_items == 0) return;
    launch_config config = base_config;
    config.halving = halving;
    config.queue = s.queue ? queue.data() : nullptr;
    if (s.queue) EPSJOIN_CUDA_TRY(cudaMemsetAsync(queue.data(), 0, sizeof(unsigned), on));
    kernel.launch(v, items, n_items, out, p, config, on);
  };

  // Counting pass.
  clock.restart();
  device_buffer<std::uint32_t> counts(std::max<std::uint32_t>(nq, 1));
  EPSJOIN_CUDA_TRY(cudaMemsetAsync(counts.data(), 0, sizeof(std::uint32_t) * nq, stream));
  row_output count_out;
  count_out.counts = counts.data();
  count_out.query_ids = req.self_join ? written_ids : queries.permutation.data();
  // Recording the hits during the count lets the rows be filled by a scatter instead of a
  // second pass over every candidate: worth it where candidates far outnumber results (d >= 6:
  // Expo8D 2M, the fill kernels took as long as the count).
  const bool want_records =
      kernel.can_record() && !req.sink.request().counts_only() &&
      (s.fill == fill_mode::records || (s.fill == fill_mode::automatic && view.d >= 6));
  device_buffer<unsigned long long> record_count(1);
  if (want_records) {
    const std::uint64_t capacity =
        record_capacity(ranges.candidates * (halving_ranges ? 2 : 1), req.budget);
    if (capacity > 0) {
      gpu.records.reserve(capacity);
      count_out.records = gpu.records.data();
      count_out.record_capacity = gpu.records.capacity();
      count_out.record_count = record_count.data();
      EPSJOIN_CUDA_TRY(cudaMemsetAsync(record_count.data(), 0, sizeof(unsigned long long), stream));
    }
  }
  const count_launcher count_items = [&](const work_item* items, std::uint32_t n,
                                         cudaStream_t on) {
    launch(view, items, n, count_out, pass::count, halving_ranges, on);
  };
  const double count_kernel_seconds = source->count(
      {gpu, queries, data_index, ranges, ordered, work.n, work.items.data(),
       kernel.takes_any_items(), view, halving_ranges,
       req.self_join ? req.data : req.queries, req.data, plan.dim_order,
       std::max(1u, req.res.threads() > 1 ? req.res.threads() - 1 : 1), count_items, req.stats});
  // Whether any pair was found elsewhere: if not (the device took every item, or the others'
  // were all empty), the rows are the device's alone, without the per-position passes.
  const bool found_elsewhere = source->found_elsewhere();
  device_row_consumer* const on_device = req.device_rows;
  if (on_device != nullptr) {
    EPSJOIN_ENSURE(!shared && req.self_join, error,
                   "internal: device rows are for a self-join with every item on the device");
    on_device->take_counts(counts.data(), queries.permutation.data(), nq, stream);
  }
  delivery out(req.sink, req.res.threads());
  // Rows of the device's alone, in a table that fits on the device, are laid out there in query
  // order (query_rows.cuh); otherwise per position on the host, in segments (rows.cuh).
  std::optional<query_layout> by_query;
  if (out.form() == delivery_form::rows && !found_elsewhere && on_device == nullptr) {
    by_query = lay_out_by_query(gpu, counts.data(), queries.permutation.data(), nq,
                                static_cast<std::uint32_t>(req.queries.n), stream);
    if (segment_capacity(by_query->total, req.budget) < by_query->total) by_query.reset();
  }
  // Rows for a device consumer are laid out on the device; the host needs the counts only to
  // cut several segments.
  std::optional<device_row_layout> device_layout;
  bool one_device_segment = false;
  if (on_device != nullptr) {
    device_layout = lay_out_on_device(gpu, counts.data(), nq, stream);
    one_device_segment =
        segment_capacity(device_layout->total, req.budget) >= device_layout->total;
  }
  // A sink that keeps only the number of pairs gets the device's sum: at 100M points, copying
  // and laying out every query's count on the host took longer than a 2-D count kernel.
  const std::optional<std::size_t> total_below =
      found_elsewhere || on_device != nullptr ? std::nullopt : out.total_only_below();
  std::optional<count_totals> totals;
  if (total_below) {
    totals = sum_row_counts(counts.data(), queries.permutation.data(), nq, *total_below, stream);
  }
  row_counts rc;
  if (!by_query && !one_device_segment && !totals) {
    rc = fetch_row_counts(counts.data(), queries.permutation.data(), nq, stream);
  }
  const std::uint64_t total = by_query             ? by_query->total
                              : one_device_segment ? device_layout->total
                              : totals             ? totals->all
                                                   : rc.offsets.back();
  unsigned long long recorded = 0;
  if (count_out.records != nullptr) {
    EPSJOIN_CUDA_TRY(
        cudaMemcpy(&recorded, record_count.data(), sizeof recorded, cudaMemcpyDeviceToHost));
  }
  req.stats.add_stage("count", clock.seconds());
  req.stats.notes.push_back({"count kernel seconds", concat(count_kernel_seconds)});
  req.stats.notes.push_back(
      {"configuration", concat(s.summary, "; ", work.n, " work items; ", data_index.n_cells,
                               " non-empty cells; ", plan.reason)});
  kernel.report(req.stats, total);
  source->report(req.stats);
  if (out.form() == delivery_form::counts) {
    if (totals) {
      out.total(totals->below);
    } else if (!found_elsewhere) {
      out.counts(rc.ids, rc.counts);
    } else {
      // Under halving a row's count has the device's part and the rest.
      row_counts both = rc;
      const std::vector<std::uint32_t> elsewhere = source->counts_elsewhere(nq);
      for (std::uint32_t p = 0; p < nq; ++p) both.counts[p] += elsewhere[p];
      out.counts(both.ids, both.counts);
    }
    return row_join_result::done;
  }

  // Filling pass, segment by segment.
  clock.restart();
  const std::vector<row_segment> segments =
      !by_query && !one_device_segment
          ? plan_segments(rc, work.host_first, segment_capacity(total, req.budget))
      : total > 0 ? std::vector<row_segment>{{0, nq, 0, total}}
                  : std::vector<row_segment>{};
  // The records fill the rows when they all fit and the table is one segment.
  const bool scatter_fill = count_out.records != nullptr && segments.size() == 1 &&
                            recorded <= count_out.record_capacity && recorded == total;
  if (count_out.records != nullptr) {
    req.stats.notes.push_back(
        {"fill", scatter_fill
                     ? concat("scattered ", recorded, " recorded hits")
                     : concat("second pass (", recorded, " hits for ", count_out.record_capacity,
                              " records, ", segments.size(), " segments)")});
  }
  // Halving writes both directions, and the reverse row may lie in another segment.
  const bool halving_fill = halving_ranges && segments.size() <= 1;
  if (shared && halving_ranges && !halving_fill) {
    // The FULL fill below would write, in the device's rows, the pairs found elsewhere and
    // written there too; nothing has reached the sink yet, so the caller can start again with pattern=full.
    req.stats.notes.push_back({"pattern", concat("lid-unicomp's GPU rows need ", segments.size(),
                                                 " segments; the join is re-run with full")});
    return row_join_result::needs_full_pattern;
  }
  if (halving_ranges && !halving_fill) {
    req.stats.notes.push_back({"pattern",
                               "lid-unicomp fills only a single segment; the fill "
                               "used full (the counts are the same)"});
  }
  neighbor_ranges full_ranges;
  const neighbor_ranges* fill_ranges = &ranges;
  device_buffer<work_item> fill_items;
  const work_list* fill_work = &work;
  work_list full_work;
  if (halving_ranges && !halving_fill) {
    full_ranges = find_neighbor_ranges(gpu, stream, queries, data_index, grid::access_pattern::full,
                                       req.self_join);
    full_work = build_items(gpu, stream, queries.cell_begin.data(), queries.n_cells, full_ranges,
                            false, chunk, kernel.workload_lanes());
    fill_ranges = &full_ranges;
    fill_work = &full_work;
  }
  join_view<T> fill_view = view;
  fill_view.range_offsets = fill_ranges->offsets.data();
  fill_view.ranges = fill_ranges->ranges.data();
  std::vector<std::uint32_t> segment_first;
  for (const row_segment& seg : segments) segment_first.push_back(seg.first);
  // Where each segment's items start in the fill list.
  std::vector<std::uint32_t> item_begin(segments.size() + 1, 0);
  const std::uint32_t device_items = source->device_items(work.n);
  if (shared && segments.size() == 1) {
    // Only the device's items, a prefix of the workload order (the other rows, or under halving
    // the other part of each row, have no room in the device layout).
    item_begin[1] = device_items;
  } else if (device_items < work.n) {
    // (When the device took every item, the fill is the plain one, below.)
    const std::vector<work_item> own = source->device_fill_items(segments, item_begin);
    fill_items.reserve(std::max<std::size_t>(own.size(), 1));
    EPSJOIN_CUDA_TRY(cudaMemcpyAsync(fill_items.data(), own.data(), sizeof(work_item) * own.size(),
                                     cudaMemcpyHostToDevice, stream));
    EPSJOIN_CUDA_TRY(cudaStreamSynchronize(stream));
  } else {
    if (segments.size() > 1 || fill_work != &work) {
      fill_items = order_items(gpu, stream, *fill_work, segment_first, s.sort);
    }
    for (std::size_t k = 0; k < segments.size(); ++k) {
      const auto lo = std::lower_bound(fill_work->host_first.begin(), fill_work->host_first.end(),
                                       segments[k].first);
      const auto hi = std::lower_bound(fill_work->host_first.begin(), fill_work->host_first.end(),
                                       segments[k].end);
      item_begin[k + 1] = item_begin[k] + static_cast<std::uint32_t>(hi - lo);
    }
  }
  const work_item* items = fill_items.data() != nullptr ? fill_items.data() : ordered;
  device_buffer<std::uint32_t> cursor;
  if (halving_fill || scatter_fill) {
    cursor.reserve(std::max<std::uint32_t>(nq, 1));
    EPSJOIN_CUDA_TRY(cudaMemsetAsync(cursor.data(), 0, sizeof(std::uint32_t) * nq, stream));
  }
  req.stats.add_stage("plan rows", clock.seconds());

  auto fill = [&](std::size_t k, const row_segment& seg, std::uint32_t* neighbors,
                  const std::uint64_t* row_offset, cudaStream_t on) {
    if (scatter_fill) {
      scatter_records(gpu.records.data(), recorded, row_offset, seg.begin, cursor.data(), neighbors,
                      on);
      return;
    }
    row_output out;
    out.neighbors = neighbors;
    out.row_offset = row_offset;
    out.segment_begin = seg.begin;
    out.cursor = cursor.data();
    out.query_ids = req.self_join ? written_ids : queries.permutation.data();
    launch(halving_fill ? view : fill_view, items + item_begin[k],
           item_begin[k + 1] - item_begin[k], out, pass::fill, halving_fill, on);
  };
  // The counting pass ran on `stream`; the fill kernels run on the same stream.
  if (on_device != nullptr) {
    run_device_row_segments(gpu, *device_layout, segments, queries.permutation.data(), fill,
                            *on_device, req.stats, req.options.progress);
    return row_join_result::done;
  }
  if (by_query && req.sink.request().device_table) {
    hand_device_table(req.sink, fill_device_table(gpu, *by_query, fill,
                                                  req.self_join && req.options.include_self,
                                                  req.stats));
    return row_join_result::done;
  }
  if (by_query) {
    run_query_rows(gpu, *by_query, fill, out, req.self_join && req.options.include_self,
                   req.budget, req.stats, req.options.progress);
    return row_join_result::done;
  }
  if (!found_elsewhere) {
    run_row_segments(gpu, rc, segments, req.queries.n, fill, out, req.budget, req.stats,
                     req.options.progress);
    return row_join_result::done;
  }
  const std::vector<std::uint32_t> elsewhere = source->counts_elsewhere(nq);
  rows_beside beside{elsewhere, {}};
  run_row_segments(gpu, rc, segments, req.queries.n, fill, out, req.budget, req.stats,
                   req.options.progress, &beside);
  clock.restart();
  source->deliver_elsewhere(out, rc.counts, req.res.threads());
  req.stats.add_stage("cpu rows", clock.seconds());
  return row_join_result::done;
}

template class work_source<float>;
template class work_source<double>;
template row_join_result run_row_join<float>(join_request&, const row_join_params&,
                                             row_join_kernel<float>&, work_source<float>*);
template row_join_result run_row_join<double>(join_request&, const row_join_params&,
                                              row_join_kernel<double>&, work_source<double>*);

}  // namespace epsjoin::detail::row_join
