#pragma once
// ted-join and meta-16q each have two kernels: a tiles kernel over the candidates the index
// leaves, and a GEMM-tiled one over every pair, faster per pair, worth it where the index prunes
// little. Both engines read the choice the same way (kernel = auto | tiles | gemm, a parameter of
// one kernel asking for it) and decide kernel=auto the same way; only their thresholds differ.

#include <string>
#include <string_view>

#include "core/expects.hpp"
#include "core/params.hpp"

namespace epsjoin::detail::tensor {

enum class kernel_choice { automatic, tiles, gemm };

/// Reads `kernel` (auto | tiles | gemm; "auto" when absent) into `name`. `params_kernel`: the
/// kernel the engine's own kernel parameters belong to; `asked` whether one of them is given (it
/// then asks for that kernel); `refusal` the error when the other kernel is named with them.
inline kernel_choice read_kernel_choice(const param_map& params, kernel_choice params_kernel,
                                        bool asked, std::string_view refusal, std::string& name) {
  name = param_choice(params, "kernel", {"auto", "tiles", "gemm"}, "auto");
  const std::string_view other = params_kernel == kernel_choice::tiles ? "gemm" : "tiles";
  EPSJOIN_EXPECTS(name != other || !asked, refusal);
  return name == "gemm"    ? kernel_choice::gemm
         : name == "tiles" ? kernel_choice::tiles
         : asked           ? params_kernel
                           : kernel_choice::automatic;
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
