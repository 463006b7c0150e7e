#pragma once
/// @file result.hpp
/// @brief Result shapes: ordered pairs and the CSR neighbour table.

#include <cstdint>
#include <span>
#include <vector>

namespace epsjoin {

/// @brief One result pair: a query id and the id of a point within eps of it.
struct index_pair {
  std::uint32_t query = 0;
  std::uint32_t neighbor = 0;
  friend bool operator==(const index_pair&, const index_pair&) = default;
  friend auto operator<=>(const index_pair&, const index_pair&) = default;
};

/// @brief CSR neighbour table: the neighbours of query i are
///        neighbors[offsets[i] .. offsets[i + 1]). Symmetric for a self-join.
struct neighbor_table {
  std::vector<std::uint64_t> offsets;   ///< [n_queries + 1]
  std::vector<std::uint32_t> neighbors; ///< [|R|]

  std::size_t n_queries() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::uint64_t n_pairs() const noexcept { return offsets.empty() ? 0 : offsets.back(); }
  std::span<const std::uint32_t> row(std::size_t i) const noexcept {
    return {neighbors.data() + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i])};
  }
};

}  // namespace epsjoin
