#pragma once
// super-ego as an index that joins any chunk of its queries, given by position (hegjoin's CPU
// side, dissertation sec. 4.4.5; hetero/cpu_ego.hpp): the points EGO-sorted once; a chunk's
// queries, which are not a contiguous part of the EGO order, are put in EGO order, cut into a
// small partition tree of their own and joined recursively against the index's tree.
//
// The hits pass eps^2 widened by a bound on how far two roundings of one sum can differ (the
// leaves round their own way: another dimension order, no fused multiply-add in the 16-byte
// loops): the caller confirms each with its own arithmetic, so a row holds exactly what the
// caller's other engine would put in it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"

namespace epsjoin::detail::ego {

/// Where a chunk's rows are appended: one query position, hit count and run of hits a row.
struct row_appender {
  std::vector<std::uint32_t>& positions;
  std::vector<std::uint32_t>& counts;
  std::vector<std::uint32_t>& neighbors;
};

template <class T>
class chunk_index {
 public:
  struct settings {
    std::size_t leaf = 0;        ///< index parts joined by brute force; 0: 128 to 8-D, else 256
    std::size_t query_leaf = 8;  ///< a chunk's queries are cut into parts of at most this many
  };

  /// EGO-sorts the points (dimensions reordered by selectivity) on `threads` threads; nullptr
  /// as soon as `wanted` says no (asked between the build's steps). `queries` and `data` are
  /// in the caller's position order (the same view in a self-join) and must outlive the index.
  static std::unique_ptr<chunk_index> build(dataset_view queries, dataset_view data,
                                            bool self_join, T eps2, const settings& how,
                                            unsigned threads, const std::function<bool()>& wanted);
  ~chunk_index();
  chunk_index(const chunk_index&) = delete;
  chunk_index& operator=(const chunk_index&) = delete;

  /// Appends to `out` the row of each query position in `positions` (in the chunk's EGO order):
  /// its data positions within the widened eps (a self-join's own position left out). Returns
  /// the distances it computed.
  std::uint64_t join(std::span<const std::uint32_t> positions, const row_appender& out) const;

  /// The leaf sizes, the dimension order and the build's time, for the notes.
  std::string describe() const;

 private:
  struct state;
  explicit chunk_index(std::unique_ptr<state> built);
  std::unique_ptr<state> state_;
};

}  // namespace epsjoin::detail::ego
