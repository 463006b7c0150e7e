#pragma once
// ted-join and meta-16q each have two kernels: a tiles kernel over the candidates the index
// leaves, and a GEMM-tiled one over every pair, faster per pair, worth it where the index prunes
// little. Both engines read the choice the same way (kernel = auto | tiles | gemm, a parameter of
// one kernel asking for it) and decide kernel=auto the same way; only their thresholds differ.

#include <string>
#include <string_view>

#include "base/expects.hpp"
#include "core/engine_params.hpp"

namespace epsjoin::detail::tensor {

enum class kernel_choice { automatic, tiles, gemm };

/// A tensor engine's kernel as its parameters ask: `choice` for its decision, `name` for the
/// summary ("auto" when absent).
struct kernel_param {
  kernel_choice choice = kernel_choice::automatic;
  std::string name = "auto";
};

/// Declares and reads `kernel` (auto | tiles | gemm). `params_kernel`: the kernel the engine's
/// own kernel parameters belong to; `asked` whether one of them is given (it then asks for that
/// kernel); `refusal` the error when the other kernel is named with them.
inline kernel_param read_kernel_choice(param_reader& reader, kernel_choice params_kernel,
                                       bool asked, std::string_view refusal) {
  kernel_param k;
  k.name = reader.choice("kernel", param_kind::tuning,
                         "auto | tiles (over the index's candidates) | gemm (every pair)",
                         {"auto", "tiles", "gemm"}, "auto");
  const std::string_view other = params_kernel == kernel_choice::tiles ? "gemm" : "tiles";
  EPSJOIN_EXPECTS(k.name != other || !asked, refusal);
  k.choice = k.name == "gemm"    ? kernel_choice::gemm
             : k.name == "tiles" ? kernel_choice::tiles
             : asked             ? params_kernel
                                 : kernel_choice::automatic;
  return k;
}

/// The kernel that runs and why, for the "kernel" note.
struct gemm_decision {
  bool use_gemm = false;
  std::string reason;
};

/// kernel=gemm, or kernel=auto where the GEMM kernel `fits` shared memory and the index
/// `prunes_little` (the engine's test: its share of the pairs left, or nothing indexed).
/// `percent_left`: the candidates in percent of all pairs, as the engine computes it.
inline gemm_decision decide_gemm(kernel_choice kernel, bool fits, bool one_cell,
                                 bool prunes_little, double percent_left) {
  gemm_decision d;
  d.use_gemm = kernel == kernel_choice::gemm ||
               (kernel == kernel_choice::automatic && prunes_little && fits);
  d.reason = kernel == kernel_choice::gemm ? "kernel=gemm"
             : one_cell                    ? "nothing indexed"
                                           : concat("the index left ", percent_left, "% of the pairs");
  return d;
}

}  // namespace epsjoin::detail::tensor
