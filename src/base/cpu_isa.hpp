#pragma once
// How the CPU engines use instruction sets beyond the x86-64 baseline: one mechanism for all.
//
// A hot loop is compiled twice from one template: once for the baseline (SSE2), and once inside
// a function marked EPSJOIN_ISA_V3 (x86-64-v3: AVX2 and FMA) that the engine calls only where
// cpu_has_v3() says the processor has them. The v3 function is the loop's only entry; what it
// calls is inlined into it (always_inline helpers, or `flatten`), so nothing out of line is
// compiled for AVX. That is why no translation unit is built with -mavx2 or -mfma: a whole file
// compiled so would also emit AVX copies of ODR-merged functions (a std::vector member, say) that
// the linker may then hand to baseline callers on processors without AVX.
//
// simd<T, Bytes> names the vectors (GCC/Clang vector extensions): 16 bytes in baseline code and 32
// inside v3 functions. 32-byte vectors in baseline code are lowered to SSE2 pairs and run several
// times slower, hence two widths rather than one.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(EPSJOIN_NO_AVX2)
#define EPSJOIN_ISA_HAS_V3 1
// arch=x86-64-v3 keeps the baseline's processor and tuning, which GCC requires before it inlines
// a baseline function (a template instantiated elsewhere) into a v3 one.
#define EPSJOIN_ISA_V3 __attribute__((target("arch=x86-64-v3")))
#else
#define EPSJOIN_ISA_HAS_V3 0
#define EPSJOIN_ISA_V3
#endif
/// For every function taking or returning a vector: out of line, a baseline caller and a v3
/// caller would disagree on how a 32-byte vector is passed (GCC's -Wpsabi note).
#define EPSJOIN_ISA_INLINE inline __attribute__((always_inline))

namespace epsjoin::detail::isa {

/// True where EPSJOIN_ISA_V3 functions may run.
inline bool cpu_has_v3() {
#if EPSJOIN_ISA_HAS_V3
  static const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return v3;
#else
  return false;
#endif
}

/// Integers as wide as T, so compare masks (lanes of -1 or 0) add into them.
template <class T>
using lane_int = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;

// Horizontal sum by halving the vector (log2(width) adds, no loop over lanes). The order is part
// of the float results of callers that reduce float vectors.
template <class V>
EPSJOIN_ISA_INLINE auto reduce(V v) {
  constexpr int n = sizeof(V) / sizeof(v[0]);
  if constexpr (n == 2) {
    return v[0] + v[1];
  } else {
    using E = std::remove_cvref_t<decltype(v[0])>;
    typedef E half __attribute__((vector_size(sizeof(V) / 2)));
    half lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    return reduce(lo + hi);
  }
}

/// `width` times -1 then `width` times 0: loading `width` lanes from (width - n) gives a mask of
/// the first n lanes in one unaligned load.
template <class I, int W>
inline constexpr std::array<I, 2 * W> first_lanes_table = [] {
  std::array<I, 2 * W> t{};
  for (int i = 0; i < W; ++i) t[static_cast<std::size_t>(i)] = -1;
  return t;
}();

/// Vectors of Bytes bytes of T and their compare masks.
template <class T, int Bytes>
struct simd;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// One specialisation per type and width: vector_size wants a concrete element type.
#define EPSJOIN_ISA_SIMD(T, B)                                                               \
  template <>                                                                               \
  struct simd<T, B> {                                                                       \
    static constexpr int width = B / static_cast<int>(sizeof(T));                           \
    using lane_int = isa::lane_int<T>;                                                      \
    typedef T vec __attribute__((vector_size(B)));                                          \
    typedef lane_int mask __attribute__((vector_size(B)));                                  \
    EPSJOIN_ISA_INLINE static vec load(const T* p) {                                        \
      vec v;                                                                                \
      std::memcpy(&v, p, sizeof v);                                                         \
      return v;                                                                             \
    }                                                                                       \
    EPSJOIN_ISA_INLINE static mask load(const lane_int* p) {                                \
      mask v;                                                                               \
      std::memcpy(&v, p, sizeof v);                                                         \
      return v;                                                                             \
    }                                                                                       \
    EPSJOIN_ISA_INLINE static void store(T* p, vec v) { std::memcpy(p, &v, sizeof v); }     \
    EPSJOIN_ISA_INLINE static void store(lane_int* p, mask v) { std::memcpy(p, &v, sizeof v); } \
    EPSJOIN_ISA_INLINE static vec splat(T x) { return vec{} + x; }                          \
    EPSJOIN_ISA_INLINE static mask splat_mask(lane_int x) { return mask{} + x; }            \
    /* all ones in the first n lanes (n <= width) */                                        \
    EPSJOIN_ISA_INLINE static mask first_lanes(std::size_t n) {                             \
      alignas(64) static constexpr auto table = first_lanes_table<lane_int, width>;         \
      return load(table.data() + (width - n));                                              \
    }                                                                                       \
    EPSJOIN_ISA_INLINE static lane_int sum(mask m) { return reduce(m); }                    \
    EPSJOIN_ISA_INLINE static T sum(vec v) { return reduce(v); }                            \
  }

/// Bit j set where lane j of compare mask m is set (its sign bit), for masks of 16 or 32 bytes;
/// SSE2's movemask on each 16-byte half, so the same code serves baseline and v3 functions.
template <class M>
EPSJOIN_ISA_INLINE unsigned lane_bits(M m) {
  constexpr bool wide_lanes = sizeof(m[0]) == 8;
  typedef double pd __attribute__((vector_size(16)));
  typedef float ps __attribute__((vector_size(16)));
  auto half = [&](std::size_t at) -> unsigned {
    if constexpr (wide_lanes) {
      pd h;
      std::memcpy(&h, reinterpret_cast<const char*>(&m) + at, 16);
      return static_cast<unsigned>(__builtin_ia32_movmskpd(h));
    } else {
      ps h;
      std::memcpy(&h, reinterpret_cast<const char*>(&m) + at, 16);
      return static_cast<unsigned>(__builtin_ia32_movmskps(h));
    }
  };
  static_assert(sizeof(M) == 16 || sizeof(M) == 32);
  if constexpr (sizeof(M) == 16) {
    return half(0);
  } else {
    return half(0) | (half(16) << (wide_lanes ? 2 : 4));
  }
}

EPSJOIN_ISA_SIMD(double, 16);
EPSJOIN_ISA_SIMD(float, 16);
EPSJOIN_ISA_SIMD(double, 32);
EPSJOIN_ISA_SIMD(float, 32);
#undef EPSJOIN_ISA_SIMD
#pragma GCC diagnostic pop

}  // namespace epsjoin::detail::isa
