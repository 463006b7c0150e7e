#pragma once
// Row-wise delivery for engines that only know how to emit pairs: after a counting pass has
// fixed every row's length, the pairs of a second pass go straight into their rows (a per-row
// atomic cursor), so no pair list is ever stored or sorted.

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "core/expects.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

class row_scatter_sink final : public result_sink {
 public:
  row_scatter_sink(row_destination dest, std::span<const std::uint32_t> counts) : dest_(dest) {
    cursor_.resize(counts.size());
    end_.resize(counts.size());
    for (std::size_t q = 0; q < counts.size(); ++q) {
      cursor_[q] = dest.starts[q];
      end_[q] = dest.starts[q] + counts[q];
    }
  }

  void consume(std::span<const index_pair> pairs) override {
    for (const index_pair& p : pairs) {
      const std::uint64_t at =
          std::atomic_ref<std::uint64_t>(cursor_[p.query]).fetch_add(1, std::memory_order_relaxed);
      EPSJOIN_ENSURE(at < end_[p.query], error, "internal: query ", p.query,
                     " got more neighbours in the second pass than it counted in the first");
      dest_.neighbors[at] = p.neighbor;
    }
  }

  /// Throws unless every row received exactly the neighbours it counted.
  void check_complete() const {
    for (std::size_t q = 0; q < cursor_.size(); ++q) {
      EPSJOIN_ENSURE(cursor_[q] == end_[q], error, "internal: query ", q, " got ", end_[q] - cursor_[q],
                     " fewer neighbours in the second pass than it counted in the first");
    }
  }

 private:
  row_destination dest_;
  std::vector<std::uint64_t> cursor_;
  std::vector<std::uint64_t> end_;
};

}  // namespace epsjoin::detail
