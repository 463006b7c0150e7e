// gds-join (GDS-Join, paper 002; dissertation ch. 5's CUDA-core baseline): the high-dimensional
// CUDA-core join. The grid indexes at most 8 of the d dimensions, the widest (by variance) first
// and the point copies hold every dimension in that order, so the distance test, with min(8, d)
// independent partial sums, usually leaves a far candidate after its first eight dimensions.
// K lanes per query split its candidates, in workload order or from the work queue, through
// the row-join pipeline (gpu/row_join/row_join.cuh); the kernel is lbjoin's query kernel with
// the ILP test (gpu/agents/query_kernel.cuh). mode=brute-force skips the index.
// arithmetic=fp16 | fp16-fp32 computes the distances from FP16 copies of the points, summing in
// FP16 or FP32 (dissertation table 6.3's CUDA-core rows; gpu/gds/half_kernel.cuh), exact by
// re-checking the FP16 error band unless --approximate; the default (join) computes in the
// join's precision.
// Params: lanes (1-32, default 8), arithmetic, mode, and the pipeline's sort, queue, pattern,
// fill, index_dims, segment_ids, chunk_ids.

#include "core/builtin_engines.hpp"
#include "gpu/gds/half_launch.cuh"
#include "gpu/gds/launch.cuh"
#include "gpu/row_join/row_join.cuh"
#include "tensor/fp16/direct_join.cuh"

namespace epsjoin::detail {

namespace {

using namespace row_join;

template <class T>
class gds_kernels final : public row_join_kernel<T> {
 public:
  explicit gds_kernels(unsigned lanes) : lanes_(lanes) {}
  unsigned item_queries() const override { return 1; }
  unsigned workload_lanes() const override { return lanes_; }
  bool can_record() const override { return false; }
  void launch(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
              const row_output& out, pass p, const row_join::launch_config& config,
              cudaStream_t stream) override {
    if (n_items > 0) gds::launch_gds(view, items, n_items, out, p, config, lanes_, stream);
  }

 private:
  unsigned lanes_;
};

enum class gds_arithmetic { join, fp16, fp16_fp32 };

struct gds_join_params final : engine_params {
  row_join_params rows;
  unsigned lanes = 8;
  gds_arithmetic arithmetic = gds_arithmetic::join;
};

class gds_join_engine final : public engine {
 public:
  std::string_view name() const override { return "gds-join"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override {
    return "high-dimensional GPU join on CUDA cores (GDS-Join): partial index, dimensions by "
           "variance, ILP distance with early exit, k lanes per query; indexed or brute force; "
           "FP16 arithmetic (exact by default) with arithmetic=fp16|fp16-fp32";
  }
  bool takes_device_links() const override { return true; }
  bool shares_work_items() const override { return true; }
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    auto p = std::make_unique<gds_join_params>();
    p->rows = read_row_join_params(reader, true);
    p->lanes = static_cast<unsigned>(reader.uint(
        "lanes", param_kind::tuning, "1, 2, 4, 8, 16 or 32: lanes per query (default 8)", 8, 1,
        32));
    EPSJOIN_EXPECTS((p->lanes & (p->lanes - 1)) == 0,
                    "parameter lanes must be 1, 2, 4, 8, 16 or 32, got ", p->lanes);
    p->rows.summary = concat(p->lanes, " lanes per query, ", p->rows.summary);
    const std::string arithmetic = reader.choice(
        "arithmetic", param_kind::ablation,
        "join (the join's precision) | fp16 | fp16-fp32: FP16 copies, summed in FP16 or FP32",
        {"join", "fp16", "fp16-fp32"}, "join");
    p->arithmetic = arithmetic == "fp16"        ? gds_arithmetic::fp16
                    : arithmetic == "fp16-fp32" ? gds_arithmetic::fp16_fp32
                                                : gds_arithmetic::join;
    return p;
  }

  void run(join_request& req) const override {
    const gds_join_params& p = req.params_as<gds_join_params>();
    const row_join_params& s = p.rows;
    const unsigned lanes = p.lanes;
    if (p.arithmetic != gds_arithmetic::join) {
      fp16::direct_kernel kernel;
      kernel.tensor_cores = false;
      kernel.half_sums = p.arithmetic == gds_arithmetic::fp16;
      kernel.lanes = lanes;
      fp16::run_direct_join(
          req, s, kernel, {gds::launch_half_query<float>, gds::launch_half_query<double>}, name());
      return;
    }
    with_precision(req.options.precision, [&]<class T>() {
      gds_kernels<T> kernels(lanes);
      run_row_join<T>(req, s, kernels);
    });
  }
};

}  // namespace

std::unique_ptr<engine> make_gds_join_engine() { return std::make_unique<gds_join_engine>(); }

}  // namespace epsjoin::detail
