#pragma once
// What the three tensor-core engines (ted-join, meta-16q, meta-1q) share around their kernels:
// the engine's face (processor "tensor"; each reads the row pipeline's parameters and its own in
// its read_params), and the row-join plug-in's bookkeeping for the exact mode: the counting
// pass's tally of band re-checks and approximate-only / exact-only pairs, read after the join
// for the notes.

#include <cstdint>
#include <limits>
#include <string_view>

#include "base/decision_tally.cuh"
#include "core/engine.hpp"
#include "gpu/row_join/row_join.cuh"

namespace epsjoin::detail::tensor {

class tensor_engine : public engine {
 public:
  std::string_view processor() const final { return "tensor"; }
};

/// A tensor engine's row_join plug-in. launch() notes which layout the counting pass ran under
/// (the tally counts a halving join's pairs once) and forwards to launch_pass().
template <class T>
class tensor_kernels : public row_join::row_join_kernel<T> {
 public:
  void launch(const row_join::join_view<T>& view, const row_join::work_item* items,
              std::uint32_t n_items, const row_join::row_output& out, row_join::pass p,
              const row_join::launch_config& config, cudaStream_t stream) final {
    if (p == row_join::pass::count) halving_count_ = config.halving;
    launch_pass(view, items, n_items, out, p, config, stream);
  }

 protected:
  /// The unit roundoff of the direct formula the band's pairs are re-checked with.
  static constexpr double direct_u = std::numeric_limits<T>::epsilon() / 2;

  virtual void launch_pass(const row_join::join_view<T>& view, const row_join::work_item* items,
                           std::uint32_t n_items, const row_join::row_output& out,
                           row_join::pass p, const row_join::launch_config& config,
                           cudaStream_t stream) = 0;
  /// Zeroes the tally before the counting pass; the kernels' view takes the pointer.
  unsigned long long* reset_tally(cudaStream_t stream) { return tally_.reset(stream); }
  decision_tally::counts read_tally() const { return tally_.read(halving_count_); }

 private:
  bool halving_count_ = false;
  decision_tally tally_;
};

}  // namespace epsjoin::detail::tensor
