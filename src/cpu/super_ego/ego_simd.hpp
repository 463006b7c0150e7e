#pragma once
// Vectors for super-ego's leaf loops, through the GCC/Clang vector extension: 16 bytes (the
// x86-64 baseline, SSE2) everywhere, and 32 bytes inside functions compiled for x86-64-v3
// (AVX2, FMA) that the engine calls only after checking the CPU. Every helper taking or
// returning a vector is forced inline, so no out-of-line function passes a 32-byte vector and
// no function shared between the two widths is compiled with AVX.

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(EPSJOIN_NO_AVX2)
#define EPSJOIN_EGO_HAS_AVX2 1
#define EPSJOIN_EGO_AVX2 __attribute__((target("arch=x86-64-v3")))
#else
#define EPSJOIN_EGO_HAS_AVX2 0
#define EPSJOIN_EGO_AVX2
#endif
#define EPSJOIN_EGO_INLINE inline __attribute__((always_inline))

namespace epsjoin::detail::ego {

/// True when the 32-byte kernels may run here.
inline bool cpu_has_avx2() {
#if EPSJOIN_EGO_HAS_AVX2
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

/// Vectors of Bytes bytes of T, and their compare masks (lanes of -1 or 0, as wide as T).
template <class T, int Bytes>
struct simd;

// One specialisation per type and width: vector_size wants a concrete element type.
#define EPSJOIN_EGO_SIMD(T, I, B)                                                       \
  template <>                                                                           \
  struct simd<T, B> {                                                                   \
    static constexpr int width = B / static_cast<int>(sizeof(T));                       \
    using lane_int = I;                                                                 \
    typedef T vec __attribute__((vector_size(B)));                                      \
    typedef I mask __attribute__((vector_size(B)));                                     \
    EPSJOIN_EGO_INLINE static vec load(const T* p) {                                    \
      vec v;                                                                            \
      std::memcpy(&v, p, sizeof v);                                                     \
      return v;                                                                         \
    }                                                                                   \
    EPSJOIN_EGO_INLINE static mask load(const I* p) {                                   \
      mask v;                                                                           \
      std::memcpy(&v, p, sizeof v);                                                     \
      return v;                                                                         \
    }                                                                                   \
    EPSJOIN_EGO_INLINE static void store(I* p, mask v) { std::memcpy(p, &v, sizeof v); } \
    EPSJOIN_EGO_INLINE static vec splat(T x) { return vec{} + x; }                      \
    EPSJOIN_EGO_INLINE static mask first_lanes(std::size_t n) {                         \
      mask m{};                                                                         \
      for (int i = 0; i < width; ++i) m[i] = static_cast<std::size_t>(i) < n ? -1 : 0;  \
      return m;                                                                         \
    }                                                                                   \
    EPSJOIN_EGO_INLINE static I sum(mask m) {                                           \
      I s = 0;                                                                          \
      for (int i = 0; i < width; ++i) s += m[i];                                        \
      return s;                                                                         \
    }                                                                                   \
  }

EPSJOIN_EGO_SIMD(double, std::int64_t, 16);
EPSJOIN_EGO_SIMD(float, std::int32_t, 16);
// GCC notes that a 32-byte vector passed or returned without AVX would change the ABI; these
// functions are always inlined, so no such call is ever made.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
EPSJOIN_EGO_SIMD(double, std::int64_t, 32);
EPSJOIN_EGO_SIMD(float, std::int32_t, 32);
#undef EPSJOIN_EGO_SIMD

#pragma GCC diagnostic pop

/// Per-candidate hit counters, integers as wide as T so compare masks add into them.
template <class T>
using lane_count = typename simd<T, 16>::lane_int;

/// Elements of padding after each column and counter array: a vector may start at the last
/// element and read (never use) up to 7 more.
inline constexpr std::size_t simd_pad = 8;

}  // namespace epsjoin::detail::ego
