// meta-1q (dissertation ch. 6, META-1Q): one query against 16 candidates an MMA group on the
// FP16 tensor cores with the direct formula (meta1q_kernel.cuh), sums in FP32 or FP16, on the
// pipeline it shares with gds-join's FP16 arithmetic on CUDA cores (tensor/fp16/direct_join.cuh).
// The data is scaled as for meta-16q; exact by default (direct_bound.hpp's band, re-checked with
// the direct formula in the join's precision), join_options::approximate decides by the FP16
// distance alone. Every run reports the accuracy ratio of the FP16 decision (table 6.6).
// meta-1q's params: accumulate (fp32 | fp16), mode (indexed | brute-force), and the pipeline's
// sort, queue, pattern, fill, index_dims, segment_ids, chunk_ids.

#include <limits>

#include "core/builtin_engines.hpp"
#include "tensor/common/tensor_engine.cuh"
#include "tensor/fp16/direct_join.cuh"
#include "tensor/meta1q/meta1q_launch.cuh"

namespace epsjoin::detail {

namespace meta1q {

namespace {

using namespace row_join;

struct meta1q_params final : engine_params {
  bool half_sums = false;  ///< accumulate=fp16
  row_join_params rows;
};

class meta_1q_engine final : public tensor::tensor_engine {
 public:
  std::string_view name() const override { return "meta-1q"; }
  std::string_view description() const override {
    return "FP16 tensor-core join with the direct formula (META-1Q: one query x 16 candidates a "
           "warp), FP32 or FP16 sums, indexed or brute force; exact by re-checking the proven "
           "error band (--approximate skips it)";
  }
  bool takes_device_links() const override { return true; }
  bool shares_work_items() const override { return true; }
  std::string unavailable_reason() const override {
    return gpu_unavailable_reason(0, 8, "FP16 MMA m16n8k16");
  }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    auto p = std::make_unique<meta1q_params>();
    p->half_sums = reader.choice("accumulate", param_kind::ablation,
                                 "fp32 | fp16: the sums of the squared differences",
                                 {"fp32", "fp16"}, "fp32") == "fp16";
    p->rows = read_row_join_params(reader, true);
    return p;
  }

  void run(join_request& req) const override {
    const meta1q_params& p = req.params_as<meta1q_params>();
    fp16::direct_kernel kernel;
    kernel.tensor_cores = true;
    kernel.half_sums = p.half_sums;
    fp16::run_direct_join(req, p.rows, kernel, {launch_meta1q<float>, launch_meta1q<double>},
                          name());
  }
};

}  // namespace

}  // namespace meta1q

std::unique_ptr<engine> make_meta_1q_engine() { return std::make_unique<meta1q::meta_1q_engine>(); }

}  // namespace epsjoin::detail
