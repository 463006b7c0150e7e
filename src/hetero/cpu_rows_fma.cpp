// hegjoin's CPU row kernel with hardware fused multiply-adds (built with -mfma; see
// cpu_rows_impl.hpp). Called only where the processor has them.
#define EPSJOIN_CPU_ROWS_ISA fma_isa
#include "hetero/cpu_rows_impl.hpp"
