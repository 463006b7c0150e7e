#pragma once
// The binary CSR file's fixed header (docs/formats.md): "EPSJCSR1", uint64 n_queries, uint64
// n_pairs; then uint64 offsets[n_queries + 1] and uint32 neighbors[n_pairs], little-endian.

#include <cstdint>
#include <string_view>

namespace epsjoin::detail {

inline constexpr std::string_view csr_magic = "EPSJCSR1";
inline constexpr std::uint64_t csr_header_bytes = 24;

}  // namespace epsjoin::detail
