// ted-join (TED-Join, paper 002; dissertation ch. 5): the join on the FP64 tensor cores. Same
// grid, work items and count-then-fill pipeline as lbjoin (gpu/row_join/row_join.cuh); the kernel
// (ted_kernel.cuh) computes 32 x 16 or 32 x 32 tiles of distances with the expanded formula and
// re-checks, with the direct formula, the pairs that fall inside the rounding band of
// error_bound.hpp, so the output is exact. join_options::approximate (CLI --approximate) decides by
// the expanded formula alone, as the paper does, and reports how far that is from the direct
// formula. Joins whose index prunes little (brute force, eps too wide for the grid) run as a GEMM
// over every pair (ted_gemm_kernel.cuh). Params: mode (indexed | brute-force), kernel (auto |
// tiles | gemm: auto takes gemm where the index leaves 60% of the pairs or more, unless a tiles
// parameter is given), mma (auto | m8n8k4 | m16n8k4 | m16n8k8 | m16n8k16, the gemm kernel's
// instruction), the tiles kernel's short_circuit (on | off, default off) and tile_cols (auto | 16 |
// 32: candidates per warp step; auto = 16), and the pipeline's sort, queue, pattern, fill,
// index_dims, segment_ids, chunk_ids.

#include <algorithm>
#include <array>

#include "core/builtin_engines.hpp"
#include "gpu/row_join/row_join.cuh"
#include "tensor/common/kernel_choice.hpp"
#include "tensor/common/tensor_engine.cuh"
#include "tensor/ted/error_bound.hpp"
#include "tensor/ted/ted_launch.cuh"

namespace epsjoin::detail {

namespace {

using namespace row_join;

/// Candidates per warp step: 16 at every d. The 32 x 32 tile's 228-255 registers leave one
/// block per SM, and that costs more than its fewer query-fragment loads save (Expo24D/32D/64D
/// 1M: 1.4-1.9x / 1.08x slower; brute force 2^20 points in 64-D: 8.6 s against 6.2 s;
/// bench/RESULTS.md, issue 7).
constexpr unsigned default_tile_cols = 16;

using tensor::kernel_choice;

const char* shape_name(ted::gemm::mma_shape shape) {
  using ted::gemm::mma_shape;
  switch (shape) {
    case mma_shape::m8n8k4:
      return "m8n8k4";
    case mma_shape::m16n8k4:
      return "m16n8k4";
    case mma_shape::m16n8k8:
      return "m16n8k8";
    case mma_shape::m16n8k16:
      return "m16n8k16";
  }
  return "?";
}

/// kernel=auto takes the GEMM kernel when the index leaves at least this share of all pairs as
/// candidates (its throughput over the tiles kernel's, 1.7-1.85x at 64-D, inverted and rounded).
constexpr double gemm_candidate_share = 0.6;

template <class T>
class ted_kernels final : public tensor::tensor_kernels<T> {
 public:
  ted_kernels(double eps, bool approximate, bool short_circuit, unsigned tile_cols,
              kernel_choice kernel, ted::gemm::mma_shape shape, bool tiles_wide)
      : eps_(eps),
        approximate_(approximate),
        short_circuit_(short_circuit),
        tile_cols_(tile_cols),
        kernel_(kernel),
        shape_(shape),
        tiles_wide_(tiles_wide) {}
  unsigned item_queries() const override { return 32; }
  unsigned workload_lanes() const override { return 0; }
  bool can_record() const override { return true; }
  bool takes_any_items() const override { return !use_gemm_; }

  void prepare(gpu_state& gpu, cudaStream_t stream, const join_view<T>& view,
               std::uint32_t n_queries, std::uint32_t n_data, const index_summary& index) override {
    const int d = view.d;
    const bool gemm_fits = ted::gemm::shared_bytes<T>(d) <= gpu.properties.sharedMemPerBlockOptin;
    EPSJOIN_EXPECTS(kernel_ != kernel_choice::gemm || gemm_fits,
                    "kernel=gemm holds 64 queries in shared memory: at most ",
                    ted::gemm::max_dims<T>(gpu.properties.sharedMemPerBlockOptin),
                    " dimensions in this precision on ", gpu.properties.name, ", not ", d);
    // The GEMM kernel compares every pair, faster than the tiles kernel compares candidates
    // (1.7-1.85x on Expo64D 1M, where nothing is indexed): worth it once the index leaves most
    // pairs anyway (Expo32D 1M at S 50: 98% of them).
    const bool index_prunes_little =
        index.one_cell || static_cast<double>(index.candidates) >=
                              gemm_candidate_share * static_cast<double>(index.all_pairs);
    const tensor::gemm_decision gemm = tensor::decide_gemm(
        kernel_, gemm_fits, index.one_cell, index_prunes_little,
        100.0 * static_cast<double>(index.candidates) / static_cast<double>(index.all_pairs));
    use_gemm_ = gemm.use_gemm;
    gemm_reason_ = gemm.reason;
    n_data_ = n_data;
    view_.checkpoints = (d + ted::dims_per_checkpoint - 1) / ted::dims_per_checkpoint;
    const auto cp = static_cast<std::size_t>(view_.checkpoints);
    data_norms_.reserve(std::max<std::size_t>(1, n_data * cp));
    ted::launch_prefix_norms<T>(view.data_points, n_data, d, view_.checkpoints, data_norms_.data(),
                                stream);
    view_.data_norms = data_norms_.data();
    if (view.query_points == view.data_points) {
      view_.query_norms = data_norms_.data();
    } else {
      query_norms_.reserve(std::max<std::size_t>(1, n_queries * cp));
      ted::launch_prefix_norms<T>(view.query_points, n_queries, d, view_.checkpoints,
                                  query_norms_.data(), stream);
      view_.query_norms = query_norms_.data();
    }
    const ted::decision_band band = ted::expanded_formula_band(d, eps_, this->direct_u);
    view_.per_norm = band.per_norm;
    view_.band_fixed = band.fixed;
    view_.approximate = approximate_;
    // A dropped tile is surely out under the exact decision, not under the approximate one, and
    // the two passes must agree pair by pair.
    view_.short_circuit = short_circuit_ && !approximate_;
    view_.col_blocks = static_cast<int>((tile_cols_ != 0 ? tile_cols_ : default_tile_cols) / 8);
    // Two coordinates a load: Expo8D 2M and Expo16D 1M 10-14% faster, 24-D and 32-D the same,
    // Expo64D 1M and brute force at 64-D and 128-D 10-58% slower (bench/RESULTS.md, issue 7).
    view_.paired_loads = d <= 16;
    view_.wide_mma =
        tiles_wide_ && view_.paired_loads && d % 2 == 0 && d >= 8 && view_.col_blocks == 2;
    view_.tally = this->reset_tally(stream);
  }

  void launch_pass(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
                   const row_output& out, pass p, const launch_config& config,
                   cudaStream_t stream) override {
    if (use_gemm_) {
      ted::launch_ted_gemm<T>(view, view_, n_data_, items, n_items, out, p, config.halving, shape_,
                              stream);
    } else {
      ted::launch_ted<T>(view, view_, items, n_items, out, p, config, stream);
    }
  }

  void report(join_stats& stats, std::uint64_t pairs) override {
    const decision_tally::counts tally = this->read_tally();
    stats.notes.push_back(
        {"kernel", use_gemm_ ? concat("gemm: ", shape_name(shape_), ", ", ted::gemm::tile_queries,
                                      " x ", ted::gemm::tile_candidates, " block tiles, ",
                                      ted::gemm::stages, " stages of ", ted::gemm::stage_dims,
                                      " dimensions, every pair compared (", gemm_reason_, ")")
                             : concat("tiles: 32 x ", view_.col_blocks * 8,
                                      view_.wide_mma ? ", m16n8k8 on paired loads" : ", m8n8k4")});
    stats.notes.push_back(
        {"band re-checks",
         concat(tally.band, " ordered pairs within the rounding band (a ", view_.per_norm,
                " (|q|^2+|c|^2) + ", view_.band_fixed, ") re-checked with the direct formula")});
    if (approximate_) {
      stats.notes.push_back(
          {"accuracy", concat("approximate: ", pairs, " pairs (self pairs not counted), ",
                              tally.only_approximate, " of them not in the exact result, ",
                              tally.only_exact, " exact pairs missed; accuracy ratio ",
                              accuracy_of(tally, pairs, true).ratio)});
    }
  }

 private:
  double eps_;
  bool approximate_;
  bool short_circuit_;
  unsigned tile_cols_;  // 0: default_tile_cols
  kernel_choice kernel_;
  ted::gemm::mma_shape shape_;
  bool tiles_wide_;
  bool use_gemm_ = false;
  std::string gemm_reason_;
  std::uint32_t n_data_ = 0;
  ted::ted_view view_;
  device_buffer<double> data_norms_, query_norms_;
};

struct ted_params final : engine_params {
  row_join_params rows;
  bool short_circuit = false;
  unsigned tile_cols = 0;  // 0: default_tile_cols
  tensor::kernel_param kernel;
  std::string mma = "auto";  ///< its shape is chosen once the device is known
};

class ted_join_engine final : public tensor::tensor_engine {
 public:
  std::string_view name() const override { return "ted-join"; }
  std::string_view description() const override {
    return "FP64 tensor-core join (TED-Join): expanded formula on m8n8k4 MMA tiles, exact by "
           "re-checking the rounding band (--approximate skips it); indexed or brute force";
  }
  bool takes_device_links() const override { return true; }
  bool shares_work_items() const override { return true; }
  std::string unavailable_reason() const override {
    return gpu_unavailable_reason(0, 8, "FP64 tensor cores");
  }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    auto p = std::make_unique<ted_params>();
    p->rows = read_row_join_params(reader, true);
    // Off by default: checking the partial distances costs more than the dropped tiles save
    // (Expo24D/32D/64D 1M: 4%, 14%, 37% faster without; brute force at 64-D: 36%).
    p->short_circuit = reader.on_off(
        "short_circuit", param_kind::ablation,
        "on | off: tiles kernel drops a tile once every partial distance is past eps (default off)", false);
    const std::string tile =
        reader.choice("tile_cols", param_kind::tuning,
                      "auto | 16 | 32: the tiles kernel's candidates per warp step (auto = 16)",
                      {"auto", "16", "32"}, "auto");
    p->tile_cols = tile == "auto" ? 0u : static_cast<unsigned>(std::stoul(tile));
    // A tiles parameter asks for the tiles kernel.
    p->kernel = tensor::read_kernel_choice(
        reader, kernel_choice::tiles, reader.has("short_circuit") || reader.has("tile_cols"),
        "short_circuit and tile_cols are the tiles kernel's (kernel=tiles), not gemm's");
    p->mma = reader.choice("mma", param_kind::tuning,
                           "auto | m8n8k4 | m16n8k4 | m16n8k8 | m16n8k16: the FP64 MMA "
                           "instruction (auto: m16n8k8 on sm_90, else m8n8k4)",
                           {"auto", "m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"}, "auto");
    return p;
  }

  void run(join_request& req) const override {
    const ted_params& p = req.params_as<ted_params>();
    row_join_params s = p.rows;
    const bool short_circuit = p.short_circuit;
    const unsigned tile_cols = p.tile_cols;
    const kernel_choice kernel = p.kernel.choice;
    const std::string& kernel_name = p.kernel.name;
    gpu_state& gpu = acquire_gpu(req.res);
    if (gpu.properties.major < 8) {
      throw unavailable(concat(gpu.properties.name, " has no FP64 tensor cores (sm_80 or newer)"));
    }
    // Checked here, after the device is known, so an sm_80 device refuses a newer shape
    // before the tiles kernel's own refusal, as it always did.
    const std::string& mma = p.mma;
    EPSJOIN_EXPECTS(mma == "auto" || mma == "m8n8k4" || gpu.properties.major >= 9, "mma=", mma,
                    " needs sm_90 or newer; ", gpu.properties.name, " is sm_", gpu.properties.major,
                    gpu.properties.minor);
    EPSJOIN_EXPECTS(
        kernel != kernel_choice::tiles || mma == "auto" || mma == "m8n8k4" || mma == "m16n8k8",
        "the tiles kernel takes mma=m8n8k4 or m16n8k8, not ", mma);
    // The tiles kernel's two-coordinate loads feed m16n8k8 where the device has it: Expo16D 1M
    // at S 49 1.21 s against 1.31 s (median of 3, same run); Expo8D 2M within 2% either way.
    const bool tiles_wide = mma == "m16n8k8" || (mma == "auto" && gpu.properties.major >= 9);
    // m16n8k8 where the device has it: brute force 2^20 points, 1.05x, 1.17x and 1.20x m8n8k4 at
    // 16, 64 and 128 dimensions (bench/RESULTS.md, issue 7, run 10).
    using ted::gemm::mma_shape;
    const mma_shape shape = mma == "m8n8k4"             ? mma_shape::m8n8k4
                            : mma == "m16n8k4"          ? mma_shape::m16n8k4
                            : mma == "m16n8k8"          ? mma_shape::m16n8k8
                            : mma == "m16n8k16"         ? mma_shape::m16n8k16
                            : gpu.properties.major >= 9 ? mma_shape::m16n8k8
                                                        : mma_shape::m8n8k4;
    // The tiles kernel's settings; the "kernel" note says which kernel ran.
    s.summary = concat("FP64 MMA m8n8k4, kernel ", kernel_name, ", ",
                       req.options.approximate ? "approximate" : "exact", ", tiles kernel 32 x ",
                       tile_cols != 0 ? tile_cols : default_tile_cols,
                       req.data.d <= 16 ? " paired loads" : "", " short-circuit ",
                       short_circuit ? "on" : "off", ", ", s.summary);
    with_precision(req.options.precision, [&]<class T>() {
      ted_kernels<T> kernels(req.options.eps, req.options.approximate, short_circuit, tile_cols,
                             kernel, shape, tiles_wide);
      run_row_join<T>(req, s, kernels);
    });
  }
};

}  // namespace

std::unique_ptr<engine> make_ted_join_engine() { return std::make_unique<ted_join_engine>(); }

}  // namespace epsjoin::detail
