#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
// counter-based generator behind the synthetic datasets. Counter-based means the value at any
// position is a pure function of (key, counter): each point gets its own stream, keyed by the
// seed and addressed by the point index, so the output never depends on how the points are
// split among threads, and the first points of a large set equal those of a small one.
// Integer arithmetic only, so it is bit-identical on every machine.

#include <array>
#include <cstdint>

namespace epsjoin::detail {

using philox_block = std::array<std::uint32_t, 4>;
using philox_key = std::array<std::uint32_t, 2>;

/// One Philox4x32-10 evaluation: the 128 random bits at `counter` under `key`.
constexpr philox_block philox4x32_10(philox_block counter, philox_key key) noexcept {
  constexpr std::uint64_t m0 = 0xD2511F53u;
  constexpr std::uint64_t m1 = 0xCD9E8D57u;
  constexpr std::uint32_t w0 = 0x9E3779B9u;
  constexpr std::uint32_t w1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += w0;
      key[1] += w1;
    }
    const std::uint64_t p0 = m0 * counter[0];
    const std::uint64_t p1 = m1 * counter[2];
    counter = {
        static_cast<std::uint32_t>(p1 >> 32) ^ counter[1] ^ key[0], static_cast<std::uint32_t>(p1),
        static_cast<std::uint32_t>(p0 >> 32) ^ counter[3] ^ key[1], static_cast<std::uint32_t>(p0)};
  }
  return counter;
}

/// What a stream is for; part of the counter, so streams of different purposes never overlap
/// (and uniform and exponential sets of one seed are not transforms of each other).
enum class stream_tag : std::uint32_t {
  uniform_point = 1,
  exponential_point = 2,
  gaussian_point = 3,
  gaussian_centre = 4,
};

/// The 64-bit words of one (seed, tag, index) stream, in order. Counter layout:
/// [block number, tag, index low, index high]; 2^32 blocks (2^33 words) per stream is far
/// beyond what one point consumes (d <= 4096 values plus redraws).
class counter_stream {
 public:
  constexpr counter_stream(std::uint64_t seed, stream_tag tag, std::uint64_t index) noexcept
      : key_{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)},
        counter_{0, static_cast<std::uint32_t>(tag), static_cast<std::uint32_t>(index),
                 static_cast<std::uint32_t>(index >> 32)} {}

  constexpr std::uint64_t next_u64() noexcept {
    if (used_ == 2) {
      block_ = philox4x32_10(counter_, key_);
      ++counter_[0];
      used_ = 0;
    }
    const unsigned k = 2 * used_++;
    return (static_cast<std::uint64_t>(block_[k + 1]) << 32) | block_[k];
  }

  /// Uniform in [0, 1): the top 53 bits scaled by 2^-53, exact (every value is a double).
  constexpr double next_unit() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1p-53; }

  /// Uniform integer in [0, bound), bound < 2^32: the high word of the 96-bit product
  /// word * bound (bias at most bound / 2^64, far below anything measurable).
  constexpr std::uint32_t next_below(std::uint32_t bound) noexcept {
    const std::uint64_t w = next_u64();
    const std::uint64_t hi = (w >> 32) * bound;
    const std::uint64_t lo = (w & 0xFFFFFFFFu) * bound;
    return static_cast<std::uint32_t>((hi + (lo >> 32)) >> 32);
  }

 private:
  philox_key key_;
  philox_block counter_;
  philox_block block_{};
  unsigned used_ = 2;
};

}  // namespace epsjoin::detail
