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
#include "tensor/meta16q/meta16q_kernels.cuh"

namespace epsjoin::detail {

namespace {

using namespace row_join;

using meta16q::meta_kernels;
using tensor::kernel_choice;

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
  bool takes_device_links() const override { return true; }
  bool shares_work_items() const override { return true; }
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
