#include "core/row_cursors.hpp"

#include "base/expects.hpp"
#include "base/parallel.hpp"

namespace epsjoin::detail {

row_cursors::row_cursors(const row_destination& dest, std::span<const std::uint32_t> ids,
                         bool concurrent, unsigned threads)
    : dest_(dest),
      ids_(ids),
      concurrent_(concurrent),
      threads_(threads == 0 ? 1 : threads),
      next_(ids.size()) {
  parallel_for(threads_, ids.size(), std::size_t{1} << 16,
               [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t p = begin; p < end; ++p) next_[p] = dest_.row(ids_[p]);
  });
}

void row_cursors::check_complete(std::span<const std::uint32_t> counts) const {
  EPSJOIN_ENSURE(counts.size() == next_.size(), error, "internal: ", counts.size(),
                 " counts for ", next_.size(), " rows");
  std::atomic<std::size_t> first_bad{next_.size()};
  parallel_for(threads_, next_.size(), std::size_t{1} << 16,
               [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t p = begin; p < end; ++p) {
      if (next_[p] != dest_.row(ids_[p]) + counts[p]) {
        std::size_t seen = first_bad.load();
        while (p < seen && !first_bad.compare_exchange_weak(seen, p)) {}
        return;
      }
    }
  });
  const std::size_t p = first_bad.load();
  if (p == next_.size()) return;
  throw error(concat("internal: query ", ids_[p], " got ", next_[p] - dest_.row(ids_[p]),
                     " neighbours in the fill pass but counted ", counts[p]));
}

}  // namespace epsjoin::detail
