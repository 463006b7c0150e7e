// lbjoin: the load-balanced GPU join of dissertation ch. 3 and what goes past it. On gpu-sj's
// device grid it counts every query's neighbours first, then fills each row straight into its
// place in a CSR layout, segment by segment (the row-join pipeline, gpu/row_join/row_join.cuh), so a CSR sink receives rows and never
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
#include "gpu/row_join/row_join.cuh"
#include "gpu/lbjoin/lbjoin_kernels.cuh"

namespace epsjoin::detail {

namespace {

using namespace lbjoin;
using namespace row_join;

struct lbjoin_params final : engine_params {
  row_join_params rows;
  kernel_choice kernel;
};

class lbjoin_engine final : public engine {
 public:
  std::string_view name() const override { return "lbjoin"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override {
    return "load-balanced GPU join (dissertation ch. 3): cell-tiled warps or k lanes per query, "
           "workload order, work queue; rows counted then filled in place";
  }
  bool takes_device_links() const override { return true; }
  bool shares_work_items() const override { return true; }
  std::string unavailable_reason() const override { return gpu_unavailable_reason(0); }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    auto p = std::make_unique<lbjoin_params>();
    p->rows = read_row_join_params(reader, false);
    p->kernel = read_kernel_choice(reader, false);
    p->rows.summary = concat(p->kernel.summary, ", ", p->rows.summary);
    return p;
  }

  void run(join_request& req) const override {
    const lbjoin_params& p = req.params_as<lbjoin_params>();
    with_precision(req.options.precision, [&]<class T>() {
      lbjoin_kernels<T> kernels(p.kernel);
      run_row_join<T>(req, p.rows, kernels);
    });
  }
};

}  // namespace

std::unique_ptr<engine> make_lbjoin_engine() { return std::make_unique<lbjoin_engine>(); }

}  // namespace epsjoin::detail
