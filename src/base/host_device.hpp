#pragma once
// Marks code shared by host and device: __host__ __device__ under nvcc, nothing elsewhere.
#if defined(__CUDACC__)
#define EPSJOIN_HD __host__ __device__
#else
#define EPSJOIN_HD
#endif
