#pragma once
/// @file
/// @brief The device side of the table assembler: what a CSR table left in device memory (a
///        `device_csr_sink`'s) is finished into where it lies, with no copy through the host.
///        The host side of each step is `csr_sink`'s (its distances, its sorted rows) and
///        `pairs_array`'s; the device results equal them bit for bit.
///
/// Every function runs on the table's device, on the streams of `res` (which must be that
/// device's resources), and has finished when it returns. The device memory it takes for its
/// result and scratch must fit the device budget of `res` (`memory_limits::device_bytes` and
/// what the device has free), or it throws `out_of_memory` before it allocates that. A build
/// without CUDA throws `unavailable`.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "epsjoin/dataset.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin {

/// @brief An array in the memory of CUDA device `device`; `owner` frees it with its last copy
///        (hand both on, to DLPack for instance, to keep it).
template <class T>
struct device_array {
  T* data = nullptr;
  std::size_t size = 0;
  int device = 0;
  std::shared_ptr<void> owner;
};

/// @brief Each entry's Euclidean distance: out[k] for neighbour `table.neighbors[k]` of its row's
///        query, in float64, computed as the host table's distances are (each difference in
///        float64, its square rounded, summed in dimension order, then the root), so the two
///        agree to the last bit. `queries` are the table's rows (the points the join took as
///        queries; a self-join's points), `data` the points its ids index, both in the device
///        memory of the table's device, as given to the join.
/// @throws invalid_argument for points elsewhere or of another shape than the table's.
device_array<double> device_distances(resources& res, const device_csr& table,
                                      dataset_view queries, dataset_view data);

/// @brief Sorts each row's neighbours by increasing id, in place; `distances` (if not null: the
///        table's, from device_distances) move with their neighbours.
void sort_device_rows(resources& res, const device_csr& table,
                      device_array<double>* distances = nullptr);

/// @brief Which of a table's entries become pairs.
enum class pair_selection {
  every_entry,         ///< (query, neighbour) for every entry: A x B, or both orders of a pair
  neighbor_above,      ///< a self-join's unique pairs: neighbour > query
  neighbor_not_below,  ///< the same with each point's pair with itself kept: neighbour >= query
};

/// @brief The table's selected entries as pairs: a row-major [n x 2] array of int64 (query,
///        neighbour), in the table's order (rows by query, each row's entries in its order;
///        sorted rows give pairs in lexicographic order). `size` is 2n.
device_array<std::int64_t> device_pairs(resources& res, const device_csr& table,
                                        pair_selection which);

}  // namespace epsjoin
