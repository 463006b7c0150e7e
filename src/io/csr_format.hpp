#pragma once
// The binary CSR file's fixed header (docs/formats.md): "EPSJCSR1", uint64 n_queries, uint64
// n_pairs; then uint64 offsets[n_queries + 1] and uint32 neighbors[n_pairs], little-endian.

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace epsjoin::detail {

inline constexpr std::string_view csr_magic = "EPSJCSR1";
inline constexpr std::uint64_t csr_header_bytes = 24;

/// The header's bytes: the magic, then n_queries and n_pairs (little-endian uint64).
inline std::array<char, csr_header_bytes> csr_header(std::uint64_t n_queries, std::uint64_t n_pairs) {
  std::array<char, csr_header_bytes> header{};
  const std::uint64_t sizes[2] = {n_queries, n_pairs};
  std::memcpy(header.data(), csr_magic.data(), csr_magic.size());
  std::memcpy(header.data() + csr_magic.size(), sizes, sizeof sizes);
  return header;
}

}  // namespace epsjoin::detail
