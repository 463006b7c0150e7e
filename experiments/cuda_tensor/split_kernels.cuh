#pragma once
// cuda-tensor's plug-in for the row-join pipeline: the query cells are divided between
// meta-16q's tensor-core tiles kernel (on the pipeline's stream) and lbjoin's CUDA-core tiled
// kernel (on a second stream), and every launch's work items go to the kernel of their cell, both
// kernels at once. Both take the same items (32 queries of a cell) and read the same index.
//
// A row is counted and filled by the same kernel, whatever the launches: the two kernels sum a
// distance in different orders, so a pair within rounding of eps may be in one's result and not
// the other's, and a row counted by one and filled by the other would not fit its place. Hence
// cells, not positions in a launch's list (the fill's lists are cut into segments and differ from
// the count's), and the FULL pattern only (under LID-UNICOMP a pair's count in the other row
// comes from the other cell's kernel). The third design (design=warps) divides a cell's items
// between its blocks' two kinds of warps instead, and keeps each item's kind by its first
// position (warp_tasks.hpp).
//
// Which cells (designs 1 and 2): those of the heaviest work a query, until the tensor cores hold
// their share of the candidates. The share is the engine's `split`, or the model's: a probe times
// each kernel on the same sample of items before the counting pass and gives each side its
// candidates a second; the share that makes both sides end together is thr_tensor / (thr_tensor +
// thr_cuda), and the modelled time of the pass is max(W_tensor / thr_tensor, W_cuda / thr_cuda).
// Design 3 gives the tensor cores round(8 x share) of each block's 8 warps.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/memory.cuh"
#include "cuda_tensor/fused_blocks.cuh"
#include "cuda_tensor/shared_tiles.cuh"
#include "cuda_tensor/warp_tasks.hpp"
#include "gpu/lbjoin/lbjoin_kernels.cuh"
#include "gpu/row_join/row_join.cuh"
#include "tensor/meta16q/meta16q_kernels.cuh"

namespace epsjoin::detail::hetero {

/// Candidates of each item (its queries times its cell's ranges' points), on `stream`; waits for
/// them and returns them.
std::vector<std::uint64_t> item_work(const std::uint32_t* range_offsets, const point_range* ranges,
                                     const row_join::work_item* items, std::uint32_t n_items,
                                     cudaStream_t stream);

/// The model's figures, for the notes.
struct split_model {
  bool probed = false;
  double tensor_rate = 0;  ///< candidates a second, tensor cores alone on the probe
  double cuda_rate = 0;    ///< the same, CUDA cores alone
  std::uint64_t probe_items = 0;
  std::uint64_t probe_candidates = 0;
  double share = 0;  ///< of the candidates, to the tensor cores
};

/// What the passes did, for the notes.
struct split_timing {
  std::uint64_t tensor_candidates = 0, cuda_candidates = 0;  ///< counting pass
  double tensor_seconds = 0, cuda_seconds = 0;               ///< counting pass, each side's kernel
  double both_seconds = 0;                                   ///< counting pass, fork to join
};

/// How the two kinds of cores share a launch (dissertation 7.2.2's three designs, and the
/// ablations that measure them).
enum class split_design {
  two_streams,          ///< two kernels at once, on two streams
  one_stream,           ///< the same two kernels one after the other: the overlap's baseline
  blocks_interleaved,   ///< one kernel of two kinds of blocks, alternating along the grid
  blocks_tensor_first,  ///< the same, every tensor block first: the ablation
  warps,                ///< one kernel whose blocks hold warps of both kinds (shared_tiles.cuh)
};

template <class T>
class split_kernels final : public row_join::row_join_kernel<T> {
 public:
  /// `share`: the tensor cores' share of the candidates, or negative for the model's. The
  /// designs of one kernel run from fused_min_dims dimensions (warps: to warps_max_dims), the
  /// two streams outside that.
  split_kernels(double eps, bool approximate, const lbjoin::kernel_choice& cuda, double share,
                std::uint32_t probe_items, split_design design)
      : tensor_(eps, approximate, tensor::kernel_choice::tiles, 0),
        cuda_(cuda),
        cuda_stage_dims_(cuda.stage_dims),
        fixed_share_(share),
        probe_items_(probe_items),
        design_(design) {}

  unsigned item_queries() const override { return 32; }
  unsigned workload_lanes() const override { return 0; }
  bool can_record() const override { return true; }

  void prepare(gpu_state& gpu, cudaStream_t stream, const row_join::join_view<T>& view,
               std::uint32_t n_queries, std::uint32_t n_data,
               const row_join::index_summary& index) override {
    // With nothing for the tensor cores, no FP16 copies.
    if (fixed_share_ != 0) tensor_.prepare(gpu, stream, view, n_queries, n_data, index);
    cuda_.prepare(gpu, stream, view, n_queries, n_data, index);
    n_queries_ = n_queries;
    model_.share = fixed_share_;
  }

  void launch(const row_join::join_view<T>& view, const row_join::work_item* items,
              std::uint32_t n_items, const row_join::row_output& out, row_join::pass p,
              const row_join::launch_config& config, cudaStream_t stream) override;

  void report(join_stats& stats, std::uint64_t pairs) override;

 private:
  /// Times each kernel alone on the same strided sample of the items (`host` and `work` on the
  /// host, `items` on the device), counting into a scratch array (the join's counts and records
  /// are not touched); sets the model's share.
  void probe(const row_join::join_view<T>& view, const std::vector<row_join::work_item>& host,
             const std::vector<std::uint64_t>& work, const row_join::row_output& out,
             const row_join::launch_config& config, cudaStream_t stream);
  /// Gives the tensor cores the query cells of the heaviest work a query until they hold
  /// model_.share of the candidates of the first counting launch's items.
  void choose_cells(const std::vector<row_join::work_item>& host,
                    const std::vector<std::uint64_t>& work);
  bool on_tensor(std::uint32_t cell) const {
    return cell < tensor_cell_.size() && tensor_cell_[cell];
  }

  /// Both sides' items (uploaded) in one launch of the kernel of two kinds of blocks; a counting
  /// pass's timing from the blocks' own stamps.
  void launch_fused(const row_join::join_view<T>& view, std::uint32_t n_tensor,
                    std::uint64_t tensor_work, std::uint32_t n_cuda, std::uint64_t cuda_work,
                    const row_join::row_output& out, row_join::pass p, cudaStream_t stream);
  /// The launch's items as tasks of the kernel whose blocks hold warps of both kinds.
  void launch_warps(const row_join::join_view<T>& view,
                    const std::vector<row_join::work_item>& host,
                    const std::vector<std::uint64_t>& work, const row_join::row_output& out,
                    row_join::pass p, cudaStream_t stream);
  bool one_kernel(int d) const {
    if (design_ == split_design::warps) {
      return d >= static_cast<int>(fused_min_dims) && d <= static_cast<int>(warps_max_dims);
    }
    return (design_ == split_design::blocks_interleaved ||
            design_ == split_design::blocks_tensor_first) &&
           d >= static_cast<int>(fused_min_dims);
  }
  std::string kernel_note() const;
  /// Resets the clocks the one-kernel designs stamp, before a launch.
  void reset_clocks(cudaStream_t stream);
  /// Adds a counting launch's stamps to the timing.
  void add_clocks(std::uint64_t tensor_work, std::uint64_t cuda_work, cudaStream_t stream);

  meta16q::meta_kernels<T> tensor_;
  lbjoin::lbjoin_kernels<T> cuda_;
  unsigned cuda_stage_dims_;
  double fixed_share_;
  std::uint32_t probe_items_;
  split_design design_;
  bool one_kernel_ran_ = false;
  unsigned tensor_warps_ = 0;     // design warps: of a block's warps_per_block
  std::vector<item_kind> kinds_;  // design warps: by an item's first position
  std::uint64_t tasks_ = 0, shared_tasks_ = 0, busy_slots_ = 0;  // counting pass
  device_buffer<row_join::work_item> slots_;
  device_buffer<std::uint32_t> shared_cell_;
  device_buffer<side_clocks> clocks_;
  std::uint32_t n_queries_ = 0;
  split_model model_;
  split_timing timing_;
  bool cells_chosen_ = false;
  std::vector<std::uint8_t> tensor_cell_;  // by query cell: its rows go to the tensor cores
  device_buffer<row_join::work_item> tensor_items_, cuda_items_;
  cuda_stream side_;
  cuda_event fork_, tensor_start_, tensor_end_, cuda_start_, cuda_end_;
};

}  // namespace epsjoin::detail::hetero
