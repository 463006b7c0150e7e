// gpu-sj: the GPU self-join of paper 001 (GPU-SJ) on the device-built eps-grid, with the
// batch engine of src/batch. Also answers A x B joins (queries indexed with B's geometry).

#include "base/cub_call.cuh"
#include "base/params.hpp"
#include "base/timer.hpp"
#include "batch/deliver.cuh"
#include "core/builtin_engines.hpp"
#include "gpu/gpu_sj/join_kernel.cuh"
#include "gpu/join_indexes.cuh"
#include "grid/device_plan.cuh"
#include "grid/plan.hpp"

namespace epsjoin::detail {

namespace {

constexpr unsigned block = 256;

grid::access_pattern parse_pattern(const std::string& name) {
  if (name == "full") return grid::access_pattern::full;
  if (name == "unicomp") return grid::access_pattern::unicomp;
  return grid::access_pattern::lid_unicomp;
}

template <class T>
void launch_grid_join(const grid_join_view<T>& view, const strided_batch& batch,
                      const result_target& target, emit_mode mode, cudaStream_t stream) {
  if (batch.count == 0) return;
  const unsigned blocks = grid_size(batch.count, block);
  with_emit_mode(mode, [&](auto m) {
    gpu_sj_kernel<T, decltype(m)::value><<<blocks, block, 0, stream>>>(view, batch, target);
  });
  EPSJOIN_CHECK_LAUNCH();
}

}  // namespace

namespace {

struct gpu_sj_params final : engine_params {
  grid::access_pattern pattern = grid::access_pattern::lid_unicomp;
  std::string pattern_name = "lid-unicomp";  ///< for the stats notes
};

class gpu_sj_engine final : public engine {
 public:
  std::string_view name() const override { return "gpu-sj"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override {
    return "GPU-SJ (paper 001): device eps-grid, one thread per query, FULL/UNICOMP/LID-UNICOMP";
  }
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    auto p = std::make_unique<gpu_sj_params>();
    p->pattern_name = reader.choice("pattern", param_kind::ablation,
                                    "lid-unicomp | unicomp | full: neighbour cells a query "
                                    "examines (paper 001's patterns)",
                                    {"full", "unicomp", "lid-unicomp"}, "lid-unicomp");
    p->pattern = parse_pattern(p->pattern_name);
    reader.memory_override("batch_pairs");
    reader.memory_override("batches");
    return p;
  }

  void run(join_request& req) const override {
    with_precision(req.options.precision, [&]<class T>() { run_typed<T>(req); });
  }

 private:
  template <class T>
  void run_typed(join_request& req) const {
    const gpu_sj_params& params = req.params_as<gpu_sj_params>();
    const grid::access_pattern pattern = params.pattern;
    gpu_state& gpu = acquire_gpu(req.res);
    cudaStream_t stream = gpu.slots[0]->stream.get();

    stopwatch clock;
    grid::plan_options popt;
    popt.eps = req.options.eps;
    const grid::grid_plan plan = grid::plan_grid_for(gpu, stream, req.data, popt, req.res.threads());
    req.stats.add_stage("plan", clock.seconds());

    clock.restart();
    const join_indexes<T> indexes = build_join_indexes<T>(gpu, stream, req, plan);
    const grid::device_index<T>& data_index = indexes.data;
    const grid::device_index<T>& queries = indexes.queries();
    const grid::access_pattern used = req.self_join ? pattern : grid::access_pattern::full;
    const neighbor_ranges ranges =
        find_neighbor_ranges(gpu, stream, queries, data_index, used, req.self_join);
    req.stats.add_stage("index", clock.seconds());
    req.stats.candidates = ranges.candidates;

    const T eps = static_cast<T>(req.options.eps);
    grid_join_view<T> view{queries.points.data(),
                           queries.permutation.data(),
                           queries.cell_of.data(),
                           queries.cell_begin.data(),
                           data_index.points.data(),
                           data_index.permutation.data(),
                           ranges.offsets.data(),
                           ranges.ranges.data(),
                           data_index.d,
                           eps * eps,
                           req.self_join,
                           req.self_join && used != grid::access_pattern::full};
    auto launch = [&](const strided_batch& b, const result_target& t, cudaStream_t s) {
      launch_grid_join(view, b, t, t.pairs != nullptr ? emit_mode::pairs : emit_mode::count_total,
                       s);
    };
    auto count = [&](const strided_batch& b, const result_target& t, cudaStream_t s) {
      launch_grid_join(view, b, t, emit_mode::count_per_query, s);
    };
    deliver_gpu_results(req, gpu, queries.n_points, req.queries.n, launch, count);
    req.stats.notes.push_back(
        {"grid", concat(plan.reason, "; ", data_index.n_cells, " non-empty cells; pattern ",
                        params.pattern_name)});
  }
};

}  // namespace

std::unique_ptr<engine> make_gpu_sj_engine() { return std::make_unique<gpu_sj_engine>(); }

}  // namespace epsjoin::detail
