// meta-1q (dissertation ch. 6, META-1Q): one query against 16 candidates an MMA group on the
// FP16 tensor cores with the direct formula (meta1q_kernel.cuh), sums in FP32 or FP16; and the
// pipeline it shares with gds-join's FP16 arithmetic on CUDA cores (gpu/gds/half_kernel.cuh).
// The data is scaled as for meta-16q; exact by default (direct_bound.hpp's band, re-checked with
// the direct formula in the join's precision), join_options::approximate decides by the FP16
// distance alone. Every run reports the accuracy ratio of the FP16 decision (table 6.6).
// meta-1q's params: accumulate (fp32 | fp16), mode (indexed | brute-force), and the pipeline's
// sort, queue, pattern, fill, index_dims, segment_ids, chunk_ids.

#include <limits>

#include "core/builtin_engines.hpp"
#include "tensor/common/tensor_engine.cuh"
#include "tensor/fp16/half_notes.cuh"
#include "tensor/fp16/half_points.cuh"
#include "tensor/meta1q/meta1q_join.cuh"

namespace epsjoin::detail {

namespace meta1q {

namespace {

using namespace row_join;

template <class T>
class direct_kernels final : public tensor::tensor_kernels<T> {
 public:
  direct_kernels(double eps, bool approximate, direct_kernel kernel)
      : eps_(eps), approximate_(approximate), kernel_(kernel) {}
  // meta-1q: a warp per item of up to 32 queries of a cell; CUDA cores: lanes per query.
  unsigned item_queries() const override { return kernel_.tensor_cores ? 32 : 1; }
  unsigned workload_lanes() const override { return kernel_.tensor_cores ? 0 : kernel_.lanes; }
  bool can_record() const override { return false; }
  // Only the CUDA cores' loop exits early, once a partial sum passes the band.
  bool orders_dimensions() const override { return !kernel_.tensor_cores; }

  void prepare(gpu_state& /*gpu*/, cudaStream_t stream, const join_view<T>& view,
               std::uint32_t n_queries, std::uint32_t n_data,
               const index_summary& /*index*/) override {
    view_.half = points_.convert(view, n_queries, n_data, kernel_.half_sums ? eps_ : 0.0, stream);
    const fp16::direct_band band =
        fp16::direct_decision_band(view.d, kernel_.half_sums, this->direct_u);
    const double eps = eps_ * points_.scaling().scale();
    view_.band = fp16::to_float(band, eps);
    fp16::set_half_decision(view_, eps, approximate_, this->reset_tally(stream));
  }

  void launch_pass(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
                   const row_output& out, pass p, const launch_config& config,
                   cudaStream_t stream) override {
    launch_direct<T>(view, view_, items, n_items, out, p, config, kernel_, stream);
  }

  void report(join_stats& stats, std::uint64_t pairs) override {
    const char* sums = kernel_.half_sums ? "FP16" : "FP32";
    stats.notes.push_back(
        {"kernel",
         kernel_.tensor_cores
             ? concat("meta-1q: one query x 16 candidates an MMA group (the queries of a cell "
                      "in turn against each tile), differences by an identity m16n8k16 MMA, "
                      "squared distances on the diagonal of their Gram matrix, ",
                      sums, " sums")
             : concat("CUDA cores: ", kernel_.lanes,
                      " lanes a query, FP16 differences, squares summed in ", sums)});
    fp16::report_half_decisions(stats, points_.scaling(), this->read_tally(), pairs, approximate_,
                                kernel_.half_sums ? "FP16" : "FP16-FP32");
  }

 private:
  double eps_;
  bool approximate_;
  direct_kernel kernel_;
  fp16::direct_view view_;
  fp16::half_points points_;
};

class meta_1q_engine final : public tensor::tensor_engine {
 public:
  std::string_view name() const override { return "meta-1q"; }
  std::string_view description() const override {
    return "FP16 tensor-core join with the direct formula (META-1Q: one query x 16 candidates a "
           "warp), FP32 or FP16 sums, indexed or brute force; exact by re-checking the proven "
           "error band (--approximate skips it)";
  }
  std::string unavailable_reason() const override {
    return gpu_unavailable_reason(0, 8, "FP16 MMA m16n8k16");
  }
  std::vector<std::string_view> own_param_keys() const override { return {"accumulate"}; }

  void run(join_request& req) const override {
    const param_map& params = req.options.params;
    direct_kernel kernel;
    kernel.tensor_cores = true;
    kernel.half_sums = param_choice(params, "accumulate", {"fp32", "fp16"}, "fp32") == "fp16";
    run_direct_join(req, read_row_join_settings(params, true), kernel, name());
  }
};

}  // namespace

void run_direct_join(join_request& req, row_join_settings s, const direct_kernel& kernel,
                     std::string_view engine) {
  gpu_state& gpu = acquire_gpu(req.res);
  if (gpu.properties.major < 8) {
    throw unavailable(concat(engine,
                             " needs sm_80 or newer (FP16 MMA m16n8k16, half2 "
                             "arithmetic), not ",
                             gpu.properties.name));
  }
  s.summary = concat(kernel.half_sums ? "FP16" : "FP16-FP32", " direct formula on ",
                     kernel.tensor_cores ? "tensor cores" : "CUDA cores", ", ",
                     req.options.approximate ? "approximate" : "exact",
                     ", data scaled about its mean, ", s.summary);
  with_precision(req.options.precision, [&]<class T>() {
    direct_kernels<T> kernels(req.options.eps, req.options.approximate, kernel);
    run_row_join<T>(req, s, kernels);
  });
}

}  // namespace meta1q

std::unique_ptr<engine> make_meta_1q_engine() { return std::make_unique<meta1q::meta_1q_engine>(); }

}  // namespace epsjoin::detail
