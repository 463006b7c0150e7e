#pragma once
// One run of the row-join pipeline (row_join.cuh), stage by stage: index, count, then either
// the counts or the planned and filled rows go to the sink. run_row_join calls the stages in
// order; each stage leaves what the next reads in the run's members. Internal to row_join/.

#include <cstdint>
#include <future>
#include <optional>
#include <vector>

#include "base/timer.hpp"
#include "core/device_links.hpp"
#include "batch/query_rows.cuh"
#include "core/delivery.hpp"
#include "gpu/join_indexes.cuh"
#include "gpu/row_join/row_join.cuh"
#include "gpu/row_join/work_items.cuh"
#include "grid/plan.hpp"

namespace epsjoin::detail::row_join {

template <class T>
class row_join_run {
 public:
  /// `shared`: `source` is not the default one (it counts only some items on the device).
  row_join_run(join_request& req, const row_join_params& settings, row_join_kernel<T>& kernel,
               work_source<T>& source, bool shared);

  /// Plans the grid, builds the device indexes, the neighbour ranges and the work items.
  void build_index();
  /// The counting pass, and what the counts decide: the rows' layout (by query on the device,
  /// per position on the host, or for a device consumer), or the device's sum of them.
  void count();
  /// Whether the sink takes counts only, so the run ends with deliver_counts().
  bool counts_only() const noexcept { return out_.form() == delivery_form::counts; }
  void deliver_counts();
  /// Cuts the rows into segments and picks the fill (records, halving or full) and its items.
  /// False when a shared source's LID-UNICOMP rows need more than one segment: nothing has
  /// reached the sink, and the caller runs again with the FULL pattern.
  bool plan_fill();
  /// The filling pass, through whichever delivery the count chose.
  void fill_and_deliver();

 private:
  const grid::device_index<T>& data_index() const noexcept { return indexes_.data; }
  const grid::device_index<T>& queries() const noexcept { return indexes_.queries(); }
  const std::uint32_t* query_ids() const noexcept {
    return req_.self_join ? written_ids_ : queries().permutation.data();
  }
  void set_written_ids();
  void prepare_kernel();
  void launch(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
              const row_output& out, pass p, bool halving, cudaStream_t on);
  void reserve_records();
  double run_count_pass();
  void choose_layout();
  void report_count(double kernel_seconds);
  void plan_fill_items();
  void link_on_device();
  void fill_segment(std::size_t k, const row_segment& seg, std::uint32_t* neighbors,
                    const std::uint64_t* row_offset, cudaStream_t on);

  join_request& req_;
  const row_join_params& settings_;
  row_join_kernel<T>& kernel_;
  work_source<T>& source_;
  const bool shared_;
  gpu_state& gpu_;
  cudaStream_t stream_;
  launch_config base_config_;
  stopwatch clock_;
  delivery out_;

  // build_index
  grid::grid_plan plan_;
  join_indexes<T> indexes_;
  bool halving_ranges_ = false;
  neighbor_ranges ranges_;
  work_list work_;
  device_buffer<work_item> sorted_items_;
  const work_item* ordered_ = nullptr;
  device_buffer<std::uint32_t> caller_ids_;
  const std::uint32_t* written_ids_ = nullptr;
  join_view<T> view_{};
  std::uint32_t nq_ = 0;
  device_buffer<unsigned> queue_;

  std::future<void> ring_reserved_;  // the pinned ring, reserved while the index is built

  // count
  device_buffer<std::uint32_t> counts_;
  row_output count_out_;
  device_buffer<unsigned long long> record_count_;
  bool found_elsewhere_ = false;
  core_links links_;  // set for a linking join (core/device_links.hpp)
  std::optional<query_layout> by_query_;
  std::optional<count_totals> totals_;
  row_counts rc_;
  std::uint64_t total_ = 0;
  unsigned long long recorded_ = 0;

  // plan_fill
  std::vector<row_segment> segments_;
  bool scatter_fill_ = false;
  bool halving_fill_ = false;
  neighbor_ranges full_ranges_;
  work_list full_work_;
  join_view<T> fill_view_{};
  device_buffer<work_item> fill_items_;
  std::vector<std::uint32_t> item_begin_;
  const work_item* items_ = nullptr;
  device_buffer<std::uint32_t> cursor_;
};

}  // namespace epsjoin::detail::row_join
