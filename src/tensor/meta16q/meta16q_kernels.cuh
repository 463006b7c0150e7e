#pragma once
// meta-16q's kernels as the row-join pipeline takes them (meta-16q, and the tensor side of
// cuda-tensor): the FP16 conversion of the point copies in prepare(), then the indexed tiles
// kernel or the GEMM-tiled one over every pair.

#include <string>

#include "gpu/row_join/row_join.cuh"
#include "tensor/common/kernel_choice.hpp"
#include "tensor/common/tensor_engine.cuh"
#include "tensor/fp16/half_notes.cuh"
#include "tensor/fp16/half_points.cuh"
#include "tensor/meta16q/meta16q_launch.cuh"

namespace epsjoin::detail::meta16q {

/// kernel=auto takes the GEMM kernel when the index leaves at least this share of all pairs.
/// Measured on the H100 (bench/RESULTS.md, issue 8, run 7, counting kernel seconds): Expo32D 1M,
/// 98-99% left, gemm 0.41 s against tiles 0.63 s at S 50 and 0.77 s against 0.70 s at S 504;
/// Expo16D 1M, 56% and 75% left, gemm 0.29 s against 0.28 s and 0.48 s against 0.43 s.
constexpr double gemm_candidate_share = 0.9;

template <class T>
class meta_kernels final : public tensor::tensor_kernels<T> {
 public:
  /// `warp_rows`: the GEMM kernel's 32, 64, or 0 for the larger that fits shared memory.
  meta_kernels(double eps, bool approximate, tensor::kernel_choice kernel, unsigned warp_rows)
      : eps_(eps), approximate_(approximate), kernel_(kernel), warp_rows_(warp_rows) {}
  unsigned item_queries() const override { return 32; }
  unsigned workload_lanes() const override { return 0; }
  bool can_record() const override { return true; }
  bool takes_any_items() const override { return !use_gemm_; }
  bool orders_dimensions() const override { return false; }  // MMAs over every dimension

  void prepare(gpu_state& gpu, cudaStream_t stream, const row_join::join_view<T>& view,
               std::uint32_t n_queries, std::uint32_t n_data,
               const row_join::index_summary& index) override {
    const int d = view.d;
    const std::size_t limit = gpu.properties.sharedMemPerBlockOptin;
    auto fits = [&](int row_blocks) {
      return shared_bytes(d, row_blocks) + static_shared_bytes <= limit;
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
                    tile_queries(row_blocks_), " queries in shared memory: at most ",
                    max_dims(limit, row_blocks_), " dimensions on ", gpu.properties.name, " (",
                    max_dims(limit, 4), " with warp_rows=32), not ", d,
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

  /// The FP16 copies and decision band prepare() set up, for a kernel that runs meta-16q's tiles
  /// warp inside its own (cuda-tensor's kernel of two kinds of blocks).
  const meta_view& view() const noexcept { return view_; }

  void launch_pass(const row_join::join_view<T>& view, const row_join::work_item* items,
                   std::uint32_t n_items, const row_join::row_output& out, row_join::pass p,
                   const row_join::launch_config& config, cudaStream_t stream) override {
    if (use_gemm_) {
      launch_meta<T>(view, view_, n_data_, items, n_items, out, p, config.halving, row_blocks_,
                     stream);
    } else {
      launch_meta_tiles<T>(view, view_, items, n_items, out, p, config, stream);
    }
  }

  void report(join_stats& stats, std::uint64_t pairs) override {
    stats.notes.push_back(
        {"kernel",
         use_gemm_ ? concat("gemm: FP16 x FP16 -> FP32 m16n8k16 MMA, ", tile_queries(row_blocks_),
                            " x ", tile_candidates, " block tiles of ", row_blocks_ * 8,
                            " x 32 warp tiles, ", stages, " stages of ", stage_dims,
                            " dimensions, every pair compared (", gemm_reason_, ")")
                   : std::string("tiles: FP16 x FP16 -> FP32 m16n8k16 MMA, 32 queries of a cell "
                                 "x 16 candidates a warp step")});
    fp16::report_half_decisions(stats, points_.scaling(), this->read_tally(), pairs, approximate_,
                                "FP16-FP32");
  }

 private:
  double eps_;
  bool approximate_;
  tensor::kernel_choice kernel_;
  unsigned warp_rows_;
  bool use_gemm_ = false;
  std::string gemm_reason_;
  int row_blocks_ = 4;
  std::uint32_t n_data_ = 0;
  meta_view view_;
  fp16::half_points points_;
};

}  // namespace epsjoin::detail::meta16q
