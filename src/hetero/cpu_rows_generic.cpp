// hegjoin's CPU row kernel for processors without FMA instructions: std::fma in software, slow
// but rounding exactly as the GPU does (see cpu_rows_impl.hpp).
#define EPSJOIN_CPU_ROWS_ISA generic_isa
#include "hetero/cpu_rows_impl.hpp"
