#pragma once
// hegjoin's CPU side as super-ego (cpu_engine=super-ego; dissertation sec. 4.4.5): super-ego's
// index that joins any chunk of its queries (cpu/super_ego/ego_chunks.hpp), fed the queries of
// each deque chunk by position. The index's hits pass a widened eps and are confirmed here with
// the grid side's arithmetic (keep_within_on_cpu), so a pair's row holds it whichever side, and
// whichever CPU engine, computed that row. Rows are full (each query's every neighbour): EGO's
// ownership of a pair is not the grid's, so this side does not combine with LID-UNICOMP.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hetero/cpu_rows.hpp"

namespace epsjoin::detail::hetero {

struct ego_settings {
  /// Index (B) parts of at most this many points are joined by brute force; 0: super-ego's
  /// default (128 up to 8 dimensions, 256 above).
  std::size_t leaf = 0;
  /// A chunk's queries are cut into parts of at most this many.
  std::size_t query_leaf = 8;
};

template <class T>
class ego_side {
 public:
  /// EGO-sorts the view's points (dimensions reordered by selectivity) on `threads` threads;
  /// nullptr as soon as `wanted` says no (asked between the build's steps). The arrays `view`
  /// points to must outlive the side.
  static std::unique_ptr<ego_side> build(const host_join_view<T>& view,
                                         const ego_settings& settings, unsigned threads,
                                         const std::function<bool()>& wanted);
  ~ego_side();
  ego_side(const ego_side&) = delete;
  ego_side& operator=(const ego_side&) = delete;

  /// Appends the full rows of view.items[first, end) to `out` (in the chunk's EGO order), and
  /// the distances the EGO join computed to out.distances.
  void join_items(std::uint32_t first, std::uint32_t end, cpu_rows& out) const;

  /// The index's leaf size and the dimension order, for the notes.
  std::string describe() const;

 private:
  struct index;
  ego_side(const host_join_view<T>& view, std::unique_ptr<index> built);
  host_join_view<T> view_;
  std::unique_ptr<index> index_;
};

}  // namespace epsjoin::detail::hetero
