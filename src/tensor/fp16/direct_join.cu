// The FP16 direct formula's join (direct_join.cuh): the scaling, the band and the run notes
// around the kernel an engine hands in (meta-1q's, or gds-join's FP16 arithmetic's).

#include "tensor/common/tensor_engine.cuh"
#include "tensor/fp16/direct_join.cuh"
#include "tensor/fp16/half_notes.cuh"
#include "tensor/fp16/half_points.cuh"

namespace epsjoin::detail::fp16 {

namespace {

using namespace row_join;

template <class T>
class direct_kernels final : public tensor::tensor_kernels<T> {
 public:
  direct_kernels(double eps, bool approximate, direct_kernel kernel, direct_launch<T> launch)
      : eps_(eps), approximate_(approximate), kernel_(kernel), launch_(launch) {}
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
    const direct_band band = direct_decision_band(view.d, kernel_.half_sums, this->direct_u);
    const double eps = eps_ * points_.scaling().scale();
    view_.band = to_float(band, eps);
    set_half_decision(view_, eps, approximate_, this->reset_tally(stream));
  }

  void launch_pass(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
                   const row_output& out, pass p, const launch_config& config,
                   cudaStream_t stream) override {
    launch_(view, view_, items, n_items, out, p, config, kernel_, stream);
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
    report_half_decisions(stats, points_.scaling(), this->read_tally(), pairs, approximate_,
                          kernel_.half_sums ? "FP16" : "FP16-FP32");
  }

 private:
  double eps_;
  bool approximate_;
  direct_kernel kernel_;
  direct_launch<T> launch_;
  direct_view view_;
  half_points points_;
};

}  // namespace

void run_direct_join(join_request& req, row_join_params s, const direct_kernel& kernel,
                     const direct_launchers& launchers, std::string_view engine) {
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
    direct_kernels<T> kernels(req.options.eps, req.options.approximate, kernel, launchers.of<T>());
    run_row_join<T>(req, s, kernels);
  });
}

}  // namespace epsjoin::detail::fp16
