#pragma once
// Library-internal pieces of the generator, exposed for tests.

#include <cstddef>
#include <cstdint>

#include "epsjoin/generate.hpp"

namespace epsjoin::detail {

inline constexpr std::size_t max_generated_d = 4096;
inline constexpr std::uint64_t max_generated_n = 0xFFFFFFFFu;  // ids are uint32_t
/// Smallest lambda accepted: redrawing values above 1 costs 1 / (1 - e^-lambda) draws per value
/// on average, about 100 at lambda = 0.01 and unbounded as lambda goes to 0.
inline constexpr double min_lambda = 0.01;
/// Largest sigma accepted: the polar method's normals have |z| < 12.01 (its uniforms are multiples
/// of 2^-52), so every generated coordinate stays below 1.3e301, finite. A larger sigma could
/// overflow to infinity, which no reader would accept and the joins cannot measure.
inline constexpr double max_sigma = 1e300;
/// Below this many values (n * d) one thread generates everything: thread start-up would cost
/// more than it saves.
inline constexpr std::size_t parallel_threshold = std::size_t{1} << 17;

/// Throws invalid_argument when `spec` cannot be generated (d, n, lambda, clusters, sigma,
/// paper with a distribution other than exponential or a seed beyond 32 bits).
void validate(const generator_spec& spec);

/// generate() on exactly `threads` threads (0: every hardware thread). The values never depend
/// on the thread count; this exists so tests can show it.
dataset generate(const generator_spec& spec, unsigned threads);

/// The papers' Expo files: fills `out` [n x d, row-major], rounding on `threads` threads.
void generate_paper_expo(const generator_spec& spec, double* out, unsigned threads);

/// `value` rounded to 6 significant digits exactly as printf("%.6g") then strtod would.
double round_to_6g(double value) noexcept;

}  // namespace epsjoin::detail
