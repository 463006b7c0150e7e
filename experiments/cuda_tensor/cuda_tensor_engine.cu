// cuda-tensor: the tensor cores and the CUDA cores of one GPU on one join at once (dissertation
// 000, sections 7.2.2-7.2.3, the heterogeneous GPU-GPU join). The row-join pipeline builds the
// grid and the work items once; split_kernels (split_kernels.cuh) cuts every launch's
// items, heaviest first, between meta-16q's tiles kernel (FP16-FP32 MMA, exact by its band
// re-check) and lbjoin's tiled kernel (FP32/FP64 on CUDA cores) on two streams, by query cell. Of
// the three designs the dissertation lists, the first (two kernels on separate streams, the
// default) reuses both kernels unchanged, and the notes measure how far the two really overlap;
// the second (design=blocks: one kernel whose blocks are of two kinds, fused_blocks.cuh)
// runs the same two warps' code inside one launch; the third (design=warps: one kernel whose
// blocks hold warps of both kinds, shared_tiles.cuh) stages each tile of a cell's
// candidates once in shared memory for both kinds of warps. Params:
//   split        auto (the model: a probe of both kernels on the same items) | 0 to 1: the
//                share of the candidates to the tensor cores (0: CUDA cores alone, 1: tensor
//                cores alone)
//   probe_items  work items the probe times each kernel on (default 1024)
//   streams      two (default: both kernels at once) | one (one after the other on one stream:
//                the baseline the overlap is measured against)
//   design       streams (default) | blocks (from 9 dimensions) | warps (9 to 256 dimensions);
//                streams outside those
//   order        design=blocks: interleaved (default: the kinds alternate along the grid) |
//                tensor-first (the ablation)
// and lbjoin's stage_dims and the pipeline's sort, fill, index_dims, segment_ids, chunk_ids, mode
// (indexed | brute-force). No work queue: two kernels cannot share one counter. The pattern is
// full: each row is counted and filled by its cell's kernel (split_kernels.cuh says why).

#include <cstdlib>

#include "core/builtin_engines.hpp"
#include "cuda_tensor/split_kernels.cuh"
#include "tensor/common/tensor_engine.cuh"

namespace epsjoin::detail {

namespace {

struct cuda_tensor_params final : engine_params {
  double share = -1;  ///< the tensor cores' share of the candidates; negative: the model's
  std::uint32_t probe_items = 1024;
  hetero::split_design design = hetero::split_design::two_streams;
  lbjoin::kernel_choice cuda;
  row_join::row_join_params rows;
};

const char* design_name(hetero::split_design design) {
  switch (design) {
    case hetero::split_design::two_streams:
      return "streams, streams two";
    case hetero::split_design::one_stream:
      return "streams, streams one";
    case hetero::split_design::blocks_interleaved:
      return "blocks, interleaved";
    case hetero::split_design::blocks_tensor_first:
      return "blocks, tensor first";
    case hetero::split_design::warps:
      return "warps";
  }
  return "?";
}

class cuda_tensor_engine final : public tensor::tensor_engine {
 public:
  std::string_view name() const override { return "cuda-tensor"; }
  std::string_view description() const override {
    return "tensor cores and CUDA cores of one GPU at once: the heaviest work items to "
           "meta-16q's FP16 MMA tiles, the rest to lbjoin's tiled kernel, on two streams; the "
           "split from a probe of both (or split=); exact";
  }
  std::string unavailable_reason() const override {
    return gpu_unavailable_reason(0, 8, "FP16 MMA with cp.async");
  }
  bool shares_work_items() const override { return true; }
  std::unique_ptr<const engine_params> read_params(param_reader& reader) const override {
    auto p = std::make_unique<cuda_tensor_params>();
    if (const std::string* split = reader.text(
            "split", param_kind::tuning,
            "auto | 0 to 1: the tensor cores' share of the candidates (auto: from a probe of "
            "both kernels)");
        split != nullptr && *split != "auto") {
      char* end = nullptr;
      const double share = std::strtod(split->c_str(), &end);
      EPSJOIN_EXPECTS(end != split->c_str() && *end == '\0' && share >= 0 && share <= 1,
                      "parameter split must be auto or a number from 0 to 1, got '", *split, "'");
      p->share = share;
    }
    p->probe_items = static_cast<std::uint32_t>(
        reader.uint("probe_items", param_kind::tuning,
                    "work items the probe times each kernel on (default 1024)", 1024, 1, 1u << 20));
    const bool two_streams = reader.choice("streams", param_kind::ablation,
                                           "two (both kernels at once) | one (one after the "
                                           "other); design=streams",
                                           {"two", "one"}, "two") == "two";
    const std::string design = reader.choice(
        "design", param_kind::ablation,
        "streams (two kernels on two streams) | blocks (one kernel whose blocks are of the two "
        "kinds, from 9 dimensions) | warps (one kernel whose blocks hold warps of both kinds "
        "sharing candidates in shared memory, 9 to 256 dimensions); streams outside those",
        {"streams", "blocks", "warps"}, "streams");
    EPSJOIN_EXPECTS(design == "streams" || two_streams,
                    "parameter streams applies to design=streams (one kernel has one stream)");
    const bool tensor_first =
        reader.choice("order", param_kind::ablation,
                      "interleaved (the two kinds of blocks alternate along the grid) | "
                      "tensor-first (every tensor block before the CUDA blocks); design=blocks",
                      {"interleaved", "tensor-first"}, "interleaved") == "tensor-first";
    EPSJOIN_EXPECTS(!tensor_first || design == "blocks",
                    "parameter order applies to design=blocks");
    if (design == "warps") {
      p->design = hetero::split_design::warps;
    } else if (design == "blocks") {
      p->design = tensor_first ? hetero::split_design::blocks_tensor_first
                               : hetero::split_design::blocks_interleaved;
    } else {
      p->design =
          two_streams ? hetero::split_design::two_streams : hetero::split_design::one_stream;
    }
    p->cuda = lbjoin::read_kernel_choice(reader, true);
    p->rows = row_join::read_row_join_params(reader, true, false);
    EPSJOIN_EXPECTS(!reader.has("pattern") || !p->rows.lid_unicomp,
                    "cuda-tensor runs pattern=full only: under lid-unicomp a pair's count in its "
                    "other row would come from the other cell's kernel, which may decide a pair at "
                    "eps differently");
    p->rows.lid_unicomp = false;
    p->rows.summary =
        concat("split ", p->share < 0 ? std::string("auto") : concat(p->share), ", design ",
               design_name(p->design), ", sort ", p->rows.sort ? "on" : "off", ", pattern full",
               p->rows.index_dims == 0 ? ", brute force" : "");
    return p;
  }

  void run(join_request& req) const override {
    const cuda_tensor_params& p = req.params_as<cuda_tensor_params>();
    gpu_state& gpu = acquire_gpu(req.res);
    if (gpu.properties.major < 8) {
      throw unavailable(
          concat(gpu.properties.name, " lacks FP16 MMA with cp.async (sm_80 or newer)"));
    }
    with_precision(req.options.precision, [&]<class T>() {
      hetero::split_kernels<T> kernels(req.options.eps, req.options.approximate, p.cuda, p.share,
                                       p.probe_items, p.design);
      row_join::run_row_join<T>(req, p.rows, kernels);
    });
  }
};

}  // namespace

std::unique_ptr<engine> make_cuda_tensor_engine() { return std::make_unique<cuda_tensor_engine>(); }

}  // namespace epsjoin::detail
