#pragma once
// lbjoin's kernels as the row-join pipeline takes them (lbjoin and hegjoin's GPU side).

#include <array>
#include <string>
#include <string_view>

#include "gpu/lbjoin/launch.cuh"
#include "gpu/row_join/row_join.cuh"

namespace epsjoin::detail::lbjoin {

/// The kernel switches: kernel=tiled|query, lanes (query kernel), stage_dims (tiled, d >= 16).
struct kernel_choice {
  kernel_kind kind = kernel_kind::tiled;
  unsigned lanes = 8;
  unsigned stage_dims = 16;
  std::string summary;
};

/// Declares and reads the kernel switches. `tiled_only` (hegjoin, whose CPU side repeats the
/// tiled kernel's arithmetic bit for bit) takes stage_dims alone.
inline kernel_choice read_kernel_choice(param_reader& r, bool tiled_only) {
  kernel_choice k;
  std::string kernel = "tiled";
  if (!tiled_only) {
    kernel = r.choice("kernel", param_kind::ablation,
                      "tiled (a warp per cell tile) | query (k lanes per query)", {"tiled", "query"},
                      "tiled");
    k.lanes = static_cast<unsigned>(r.uint("lanes", param_kind::tuning,
                                           "1, 2, 4, 8, 16 or 32: lanes per query of the query "
                                           "kernel (default 8)",
                                           8, 1, 32));
    EPSJOIN_EXPECTS((k.lanes & (k.lanes - 1)) == 0,
                    "parameter lanes must be 1, 2, 4, 8, 16 or 32, got ", k.lanes);
  }
  k.kind = kernel == "tiled" ? kernel_kind::tiled : kernel_kind::query;
  // 16 staged dimensions once there are 16: Expo16D 1M at S 500, 1.97 s against 2.24 s; at
  // S 50 the two are within 3% (bench/RESULTS.md, issue 7).
  k.stage_dims = r.choice("stage_dims", param_kind::tuning,
                          "8 | 16: dimensions the tiled kernel stages at a time (d >= 16)",
                          {"8", "16"}, "16") == "16"
                     ? 16u
                     : 8u;
  k.summary = concat("kernel ", kernel,
                     k.kind == kernel_kind::query ? concat(" (", k.lanes, " lanes)") : "");
  return k;
}

template <class T>
class lbjoin_kernels final : public row_join::row_join_kernel<T> {
 public:
  explicit lbjoin_kernels(const kernel_choice& k)
      : kind_(k.kind), lanes_(k.lanes), stage_dims_(k.stage_dims) {}
  unsigned item_queries() const override { return kind_ == kernel_kind::tiled ? 32 : 1; }
  unsigned workload_lanes() const override { return kind_ == kernel_kind::tiled ? 0 : lanes_; }
  bool can_record() const override { return kind_ == kernel_kind::tiled; }
  void launch(const join_view<T>& view, const work_item* items, std::uint32_t n_items,
              const row_output& out, pass p, const row_join::launch_config& config,
              cudaStream_t stream) override {
    kernel_launch c;
    static_cast<row_join::launch_config&>(c) = config;
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

}  // namespace epsjoin::detail::lbjoin
