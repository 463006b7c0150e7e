// The row-join pipeline (row_join.cuh): its settings, the work sources, and the run, whose
// stages are row_join_run.cuh's.

#include <algorithm>
#include <optional>

#include "gpu/row_join/row_join.cuh"
#include "gpu/row_join/row_join_run.cuh"
#include "gpu/row_join/work_items.cuh"

namespace epsjoin::detail::row_join {

namespace {

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
                        req.device_links == nullptr,
                    "internal: a share of the items is for a counts-only join on the device alone");
    source = &share.emplace(*req.item_share);
  }
  const bool shared = source != nullptr;
  if (source == nullptr) source = &every_item;
  EPSJOIN_EXPECTS(source->allows_queue() || !s.queue,
                  "this join's work source hands out the items itself: it needs queue=off");
  row_join_run<T> run(req, s, kernel, *source, shared);
  run.build_index();
  run.count();
  row_join_result result = row_join_result::done;
  if (run.counts_only()) {
    run.deliver_counts();
  } else if (run.plan_fill()) {
    run.fill_and_deliver();
  } else {
    result = row_join_result::needs_full_pattern;
  }
  return result;
}

template class work_source<float>;
template class work_source<double>;
template row_join_result run_row_join<float>(join_request&, const row_join_params&,
                                             row_join_kernel<float>&, work_source<float>*);
template row_join_result run_row_join<double>(join_request&, const row_join_params&,
                                              row_join_kernel<double>&, work_source<double>*);

}  // namespace epsjoin::detail::row_join
