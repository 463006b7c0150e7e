// meta-16q (dissertation ch. 6, META-16Q): the join on the FP16 tensor cores with FP32
// accumulation and the expanded formula. The data is translated to its mean and scaled by a power
// of two into FP16's range (half_bound.hpp); the pipeline of the other row-join engines
// (gpu/row_join/row_join.cuh) builds the grid, counts, lays out and fills the rows. Two kernels:
// the indexed one (meta16q_tiles_kernel.cuh: 32 queries of a cell against 16 candidates a warp
// step) and, where the index prunes little, a GEMM-tiled one over every pair
// (meta16q_gemm_kernel.cuh). Exact by default: pairs whose FP16-FP32 distance lies within the
// proven error band around eps are re-checked with the direct formula in the join's precision.
// join_options::approximate (CLI
// --approximate) decides by the FP16-FP32 distance alone, as the papers do. Both modes report the
// accuracy ratio of the approximate decision (table 6.6).
// Params: mode (indexed | brute-force), kernel (auto | tiles | gemm: auto takes gemm where the
// index leaves 90% of the pairs or more), warp_rows (the gemm kernel's auto | 32 | 64: query rows
// of a warp's tile), accumulate (fp32; fp16 is refused: it cancels catastrophically), and the
// pipeline's sort, queue, pattern, fill, index_dims, segment_ids, chunk_ids.

#include <cmath>
#include <limits>

#include "core/builtin_engines.hpp"
#include "gpu/row_join/row_join.cuh"
#include "tensor/common/kernel_choice.hpp"
#include "tensor/common/tensor_engine.cuh"
#include "tensor/fp16/half_notes.cuh"
#include "tensor/fp16/half_points.cuh"
#include "tensor/meta16q/meta16q_launch.cuh"

namespace epsjoin::detail {

namespace {

using namespace row_join;

using tensor::kernel_choice;

/// kernel=auto takes the GEMM kernel when the index leaves at least this share of all pairs.
/// Measured on the H100 (bench/RESULTS.md, issue 8, run 7, counting kernel seconds): Expo32D 1M,
/// 98-99% left, gemm 0.41 s against tiles 0.63 s at S 50 and 0.77 s against 0.70 s at S 504;
/// Expo16D 1M, 56% and 75% left, gemm 0.29 s against 0.28 s and 0.48 s against 0.43 s.
constexpr double gemm_candidate_share = 0.9;

template <class T>
class meta_kernels final : public tensor::tensor_kernels<T> {
 public:
  /// `warp_rows`: the GEMM kernel's 32, 64, or 0 for the larger that fits shared memory.
  meta_kernels(double eps, bool approximate, kernel_choice kernel, unsigned warp_rows)
      : eps_(eps), approximate_(approximate), kernel_(kernel), warp_rows_(warp_rows) {}
  unsigned item_queries() const override { return 32; }
  unsigned workload_lanes() const override { return 0; }
  bool can_record() const override { return true; }
  bool orders_dimensions() const override { return false; }  // MMAs over every dimension

  void prepare(gpu_state& gpu, cudaStream_t stream, const join_view<T>& view,
               std::uint32_t n_queries, std::uint32_t n_data, const index_summary& index) override {
    const int d = view.d;
    const std::size_t limit = gpu.properties.sharedMemPerBlockOptin;
    auto fits = [&](int row_blocks) {
      return meta16q::shared_bytes(d, row_blocks) + meta16q::static_shared_bytes <= limit;
    };
    row_blocks_ = warp_rows_ == 32 ? 4 : warp_rows_ == 64 ? 8 : fits(8) ? 8 : 4;
    const double share = index.all_pairs == 0 ? 1.0
                                              : static_cast<double>(index.candidates) /
                                                    static_cast<double>(index.all_pairs);
    const tensor::gemm_decision gemm =
        tensor::decide_gemm(kernel_, fits(row_blocks_), index.one_cell,
                            index.one_cell || share >= gemm_candidate_share, 100.0 * share);
    use_gemm_ = gemm.use_gemm;
    gemm_reason_ = gemm.reason;
    EPSJOIN_EXPECTS(!use_gemm_ || fits(row_blocks_), "meta-16q's gemm kernel holds ",
                    meta16q::tile_queries(row_blocks_), " queries in shared memory: at most ",
                    meta16q::max_dims(limit, row_blocks_), " dimensions on ", gpu.properties.name,
                    " (", meta16q::max_dims(limit, 4), " with warp_rows=32), not ", d,
                    "; kernel=tiles has no such limit");
    n_data_ = n_data;
    const fp16::half_arrays half = points_.convert(view, n_queries, n_data, 0.0, stream);
    view_.query_half = half.query_half;
    view_.data_half = half.data_half;
    view_.query_norms = half.query_norms;
    view_.data_norms = half.data_norms;
    const double scale = points_.scaling().scale();
    const fp16::half_band band = fp16::half_decision_band(d, this->direct_u);
    const double eps = eps_ * scale;
    view_.band.quant_per_norm = fp16::float_up(band.quant_per_norm);
    view_.band.quant_fixed = fp16::float_up(band.quant_fixed);
    view_.band.arith_per_norm2 = fp16::float_up(band.arith_per_norm2);
    view_.band.eps_up = fp16::float_up(eps);
    view_.band.eps_down = fp16::float_down(eps);
    view_.band.one_plus_rho = fp16::float_up(1.0 + band.rho);
    view_.band.one_minus_rho = fp16::float_down(1.0 - band.rho);
    fp16::set_half_decision(view_, eps, approximate_, this->reset_tally(stream));
  }

  void launch_pass(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
                   const row_output& out, pass p, const launch_config& config,
                   cudaStream_t stream) override {
    if (use_gemm_) {
      meta16q::launch_meta<T>(view, view_, n_data_, items, n_items, out, p, config.halving,
                              row_blocks_, stream);
    } else {
      meta16q::launch_meta_tiles<T>(view, view_, items, n_items, out, p, config, stream);
    }
  }

  void report(join_stats& stats, std::uint64_t pairs) override {
    stats.notes.push_back(
        {"kernel",
         use_gemm_ ? concat("gemm: FP16 x FP16 -> FP32 m16n8k16 MMA, ",
                            meta16q::tile_queries(row_blocks_), " x ", meta16q::tile_candidates,
                            " block tiles of ", row_blocks_ * 8, " x 32 warp tiles, ",
                            meta16q::stages, " stages of ", meta16q::stage_dims,
                            " dimensions, every pair compared (", gemm_reason_, ")")
                   : std::string("tiles: FP16 x FP16 -> FP32 m16n8k16 MMA, 32 queries of a cell "
                                 "x 16 candidates a warp step")});
    fp16::report_half_decisions(stats, points_.scaling(), this->read_tally(), pairs, approximate_,
                                "FP16-FP32");
  }

 private:
  double eps_;
  bool approximate_;
  kernel_choice kernel_;
  unsigned warp_rows_;
  bool use_gemm_ = false;
  std::string gemm_reason_;
  int row_blocks_ = 4;
  std::uint32_t n_data_ = 0;
  meta16q::meta_view view_;
  fp16::half_points points_;
};

struct meta16q_params final : engine_params {
  unsigned warp_rows = 0;  ///< 32, 64, or 0 for the larger that fits
  tensor::kernel_param kernel;
  row_join_params rows;
};

class meta_16q_engine final : public tensor::tensor_engine {
 public:
  std::string_view name() const override { return "meta-16q"; }
  std::string_view description() const override {
    return "FP16 tensor-core join with FP32 accumulation (META-16Q, expanded formula), indexed "
           "or brute force; exact by re-checking the proven error band (--approximate skips it)";
  }
  bool takes_device_rows() const override { return true; }
  std::string unavailable_reason() const override {
    return gpu_unavailable_reason(0, 8, "FP16 MMA with cp.async");
  }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    auto p = std::make_unique<meta16q_params>();
    // Accepted as a key so the papers' fp16 variant is refused with the reason, not as unknown.
    EPSJOIN_EXPECTS(
        reader.choice("accumulate", param_kind::ablation,
                      "fp32 (fp16, the papers' variant, is refused: it cancels catastrophically)",
                      {"fp32", "fp16"}, "fp32") == "fp32",
        "meta-16q does not accumulate in FP16: the expanded formula |q|^2 + |c|^2 - "
        "2 q.c cancels catastrophically there (dissertation ch. 6; "
        "tests/unit/test_half_bound.cpp shows most squared distances off by more "
        "than a quarter), so only accumulate=fp32 is offered");
    // 64 rows where they fit: each shared-memory word then feeds more MMAs.
    const std::string rows =
        reader.choice("warp_rows", param_kind::tuning,
                      "auto | 32 | 64: the gemm kernel's query rows of a warp's tile (auto: 64 "
                      "where shared memory holds them)",
                      {"auto", "32", "64"}, "auto");
    p->warp_rows = rows == "auto" ? 0u : static_cast<unsigned>(std::stoul(rows));
    // warp_rows belongs to the gemm kernel and asks for it.
    p->kernel = tensor::read_kernel_choice(reader, kernel_choice::gemm, reader.has("warp_rows"),
                                           "warp_rows is the gemm kernel's, not the tiles kernel's");
    p->rows = read_row_join_params(reader, true);
    return p;
  }

  void run(join_request& req) const override {
    const meta16q_params& p = req.params_as<meta16q_params>();
    const unsigned warp_rows = p.warp_rows;
    const kernel_choice kernel = p.kernel.choice;
    const std::string& kernel_name = p.kernel.name;
    row_join_params s = p.rows;
    gpu_state& gpu = acquire_gpu(req.res);
    if (gpu.properties.major < 8) {
      throw unavailable(
          concat(gpu.properties.name, " lacks FP16 MMA with cp.async (sm_80 or newer)"));
    }
    s.summary = concat("FP16-FP32 MMA m16n8k16, kernel ", kernel_name, ", ",
                       req.options.approximate ? "approximate" : "exact",
                       ", data scaled about its mean, ", s.summary);
    with_precision(req.options.precision, [&]<class T>() {
      meta_kernels<T> kernels(req.options.eps, req.options.approximate, kernel, warp_rows);
      run_row_join<T>(req, s, kernels);
    });
  }
};

}  // namespace

std::unique_ptr<engine> make_meta_16q_engine() { return std::make_unique<meta_16q_engine>(); }

}  // namespace epsjoin::detail
