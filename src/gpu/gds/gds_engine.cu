// gds-join (GDS-Join, paper 002; dissertation ch. 5's CUDA-core baseline): the high-dimensional
// CUDA-core join. The grid indexes at most 8 of the d dimensions, the widest (by variance) first
// and the point copies hold every dimension in that order, so the distance test, with min(8, d)
// independent partial sums, usually leaves a far candidate after its first eight dimensions.
// K lanes per query split its candidates, in workload order or from the work queue, through
// lbjoin's count-then-fill pipeline (gpu/row_join/row_join.cuh). mode=brute-force skips the index.
// arithmetic=fp16 | fp16-fp32 computes the distances from FP16 copies of the points, summing in
// FP16 or FP32 (dissertation table 6.3's CUDA-core rows; gpu/gds/half_kernel.cuh), exact by
// re-checking the FP16 error band unless --approximate; the default (join) computes in the
// join's precision.
// Params: lanes (1-32, default 8), arithmetic, mode, and the pipeline's sort, queue, pattern,
// fill, index_dims, segment_ids, chunk_ids.

#include "core/builtin_engines.hpp"
#include "gpu/gds/half_launch.cuh"
#include "gpu/lbjoin/launch.cuh"
#include "gpu/row_join/row_join.cuh"
#include "tensor/fp16/direct_join.cuh"

namespace epsjoin::detail {

namespace {

using namespace lbjoin;
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
    kernel_launch c;
    static_cast<row_join::launch_config&>(c) = config;
    c.kind = kernel_kind::gds;
    c.lanes = lanes_;
    launch_join(view, items, n_items, out, p, c, stream);
  }

 private:
  unsigned lanes_;
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
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  std::vector<std::string_view> param_keys() const override {
    std::vector<std::string_view> keys = row_join_param_keys(true);
    keys.push_back("lanes");
    keys.push_back("arithmetic");
    return keys;
  }

  void run(join_request& req) const override {
    const param_map& params = req.options.params;
    row_join_settings s = read_row_join_settings(params, true);
    const auto lanes = static_cast<unsigned>(param_uint(params, "lanes", 8, 1, 32));
    EPSJOIN_EXPECTS((lanes & (lanes - 1)) == 0,
                    "parameter lanes must be 1, 2, 4, 8, 16 or 32, got ", lanes);
    s.summary = concat(lanes, " lanes per query, ", s.summary);
    const std::string arithmetic =
        param_choice(params, "arithmetic", {"join", "fp16", "fp16-fp32"}, "join");
    if (arithmetic != "join") {
      fp16::direct_kernel kernel;
      kernel.tensor_cores = false;
      kernel.half_sums = arithmetic == "fp16";
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
