#pragma once
/// @file result.hpp
/// @brief Result shapes: ordered pairs and the CSR neighbour table.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace epsjoin {

namespace detail {
/// Memory for large tables: aligned to 2 MiB and advised for transparent huge pages where the
/// system offers them, so filling gigabytes takes a page fault per 2 MiB instead of per 4 KiB.
void* allocate_table_memory(std::size_t bytes);
void free_table_memory(void* p, std::size_t bytes) noexcept;
inline constexpr std::size_t table_memory_threshold = std::size_t{32} << 20;
}  // namespace detail

/// @brief An allocator that default-initialises: `resize` leaves new ids unwritten, so a table
///        of billions of neighbours is not zeroed only to be overwritten by the engine. Large
///        blocks come from `detail::allocate_table_memory`.
template <class T>
struct default_init_allocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  T* allocate(std::size_t n) {
    if (n * sizeof(T) < detail::table_memory_threshold) return std::allocator<T>::allocate(n);
    return static_cast<T*>(detail::allocate_table_memory(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < detail::table_memory_threshold) {
      std::allocator<T>::deallocate(p, n);
    } else {
      detail::free_table_memory(p, n * sizeof(T));
    }
  }
  template <class U>
  void construct(U* p) noexcept(noexcept(::new (static_cast<void*>(p)) U)) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// @brief A vector of point ids whose `resize` does not zero.
using id_vector = std::vector<std::uint32_t, default_init_allocator<std::uint32_t>>;
/// @brief A vector of row offsets whose `resize` does not zero (the sinks write every entry, on
///        every thread: a table's offsets are gigabytes at a billion queries).
using offset_vector = std::vector<std::uint64_t, default_init_allocator<std::uint64_t>>;

/// @brief `n` copies of `value` in the memory large results get (not zeroed first), written on
///        `threads` threads (0: every core): the first writes of fresh memory are most of the
///        cost, and spread over the cores they take a fraction of it (a connectivity graph's data
///        array, all ones, beside its indices). `progress`, when given, is called from the
///        calling thread between pieces; what it throws stops the fill and is rethrown.
std::vector<double, default_init_allocator<double>> filled_values(
    std::size_t n, double value, unsigned threads,
    const std::function<void(double)>& progress = {});

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
  offset_vector offsets;                ///< [n_queries + 1]
  id_vector neighbors;                   ///< [|R|]
  /// [|R|] each neighbour's Euclidean distance, from a `csr_sink` made `with_distances`
  /// (empty otherwise)
  std::vector<double, default_init_allocator<double>> distances;

  std::size_t n_queries() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::uint64_t n_pairs() const noexcept { return offsets.empty() ? 0 : offsets.back(); }
  std::span<const std::uint32_t> row(std::size_t i) const noexcept {
    return {neighbors.data() + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i])};
  }
};

/// @brief A CSR neighbour table in the memory of a CUDA device, from a join into a
///        `device_csr_sink`: the neighbours of query i are neighbors[offsets[i] .. offsets[i + 1]).
///        `owner` owns both arrays; they are freed on `device` when its last copy goes (the
///        pointers may be handed on, to CuPy or DLPack, together with a copy of `owner`).
struct device_csr {
  std::uint64_t* offsets = nullptr;    ///< [device] [n_queries + 1]
  std::uint32_t* neighbors = nullptr;  ///< [device] [n_pairs]
  std::size_t n_queries = 0;
  std::uint64_t n_pairs = 0;
  int device = 0;
  std::shared_ptr<void> owner;
};

}  // namespace epsjoin
