#pragma once
// Vectors for super-ego's leaf loops (base/cpu_isa.hpp): 16 bytes everywhere, and 32 bytes in
// the leaf loops compiled for x86-64-v3 that the engine calls only after checking the CPU.

#include <cstddef>

#include "base/cpu_isa.hpp"

namespace epsjoin::detail::ego {

using isa::simd;

/// Per-candidate hit counters, integers as wide as T so compare masks add into them.
template <class T>
using lane_count = isa::lane_int<T>;

/// Elements of padding after each column and counter array: a vector may start at the last
/// element and read (never use) up to 7 more.
inline constexpr std::size_t simd_pad = 8;

}  // namespace epsjoin::detail::ego
