// lbjoin: the load-balanced GPU join of dissertation ch. 3 and what goes past it. On gpu-sj's
// device grid it counts every query's neighbours first, then fills each row straight into its
// place in a CSR layout, segment by segment (driver.cuh), so a CSR sink receives rows and never
// a pair. Switches (params) for the ablation of the dissertation's optimisations:
//   kernel  tiled (warp per cell item, shared candidates) | query (K lanes per query)
//   lanes   K for the query kernel: 1, 2, 4, 8, 16, 32
//   sort    on: work items heaviest first (SORTBYWL)
//   queue   on: persistent warps take items from an atomic counter (WORKQUEUE)
//   pattern full | lid-unicomp (each distance once, both directions written; one segment only)
//   index_dims  at most this many indexed dimensions (default 8, the most the grid takes)
//   stage_dims  tiled kernel at d >= 16: dimensions staged in shared memory, 8 or 16 (default)
//   fill    records (the tiled count records its hits, rows filled by a scatter) | second-pass
//           (rows filled by running the kernel again) | auto (records when d >= 6)

#include "core/builtin_engines.hpp"
#include "gpu/lbjoin/driver.cuh"

namespace epsjoin::detail {

namespace {

using namespace lbjoin;

template <class T>
class lbjoin_kernels final : public row_join_kernel<T> {
 public:
  lbjoin_kernels(kernel_kind kind, unsigned lanes, unsigned stage_dims)
      : kind_(kind), lanes_(lanes), stage_dims_(stage_dims) {}
  unsigned item_queries() const override { return kind_ == kernel_kind::tiled ? 32 : 1; }
  unsigned workload_lanes() const override { return kind_ == kernel_kind::tiled ? 0 : lanes_; }
  bool can_record() const override { return kind_ == kernel_kind::tiled; }
  void launch(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
              const row_output& out, pass p, const launch_config& config,
              cudaStream_t stream) override {
    launch_config c = config;
    c.kind = kind_;
    c.lanes = lanes_;
    c.stage_dims = stage_dims_;
    launch_join(view, items, n_items, out, p, c, stream);
  }

 private:
  kernel_kind kind_;
  unsigned lanes_;
  unsigned stage_dims_;
};

class lbjoin_engine final : public engine {
 public:
  std::string_view name() const override { return "lbjoin"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override {
    return "load-balanced GPU join (dissertation ch. 3): cell-tiled warps or k lanes per query, "
           "workload order, work queue; rows counted then filled in place";
  }
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  std::vector<std::string_view> param_keys() const override {
    std::vector<std::string_view> keys = row_join_param_keys(false);
    keys.insert(keys.end(), {"kernel", "lanes", "stage_dims"});
    return keys;
  }

  void run(join_request& req) const override {
    const param_map& params = req.options.params;
    row_join_settings s = read_row_join_settings(params, false);
    const std::string kernel = param_choice(params, "kernel", {"tiled", "query"}, "tiled");
    const auto lanes = static_cast<unsigned>(param_uint(params, "lanes", 8, 1, 32));
    EPSJOIN_EXPECTS((lanes & (lanes - 1)) == 0,
                    "parameter lanes must be 1, 2, 4, 8, 16 or 32, got ", lanes);
    const kernel_kind kind = kernel == "tiled" ? kernel_kind::tiled : kernel_kind::query;
    // 16 staged dimensions once there are 16: Expo16D 1M at S 500, 1.97 s against 2.24 s; at
    // S 50 the two are within 3% (bench/RESULTS.md, issue 7).
    const unsigned stage_dims =
        param_choice(params, "stage_dims", {"8", "16"}, "16") == "16" ? 16u : 8u;
    s.summary =
        concat("kernel ", kernel, kind == kernel_kind::query ? concat(" (", lanes, " lanes)") : "",
               ", ", s.summary);
    if (req.options.precision == scalar_type::f32) {
      lbjoin_kernels<float> kernels(kind, lanes, stage_dims);
      run_row_join<float>(req, s, kernels);
    } else {
      lbjoin_kernels<double> kernels(kind, lanes, stage_dims);
      run_row_join<double>(req, s, kernels);
    }
  }
};

}  // namespace

std::unique_ptr<engine> make_lbjoin_engine() { return std::make_unique<lbjoin_engine>(); }

}  // namespace epsjoin::detail
