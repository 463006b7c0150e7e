#pragma once
/// @file
/// @brief A join's pairs as one int64 array of (i, j) rows, the shape numpy and Arrow take.

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "epsjoin/result.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin {

namespace detail {
class placed_pairs;
}

/// @brief m pairs (i, j), row-major int64 `values()[2 k], values()[2 k + 1]`, owning their memory.
class pairs_array {
 public:
  virtual ~pairs_array() = default;
  virtual std::int64_t* data() noexcept = 0;
  virtual std::size_t size() const noexcept = 0;  ///< m, the number of pairs
};

/// @brief The pairs of a join in one int64 array (`release()`): a self-join's unordered pairs
///        once each (i < j, and (i, i) when self pairs were asked for), every (i, j) of an A x B
///        join. Sorted, grouped by i in increasing order and each group by j; otherwise in no
///        particular order.
///
/// Unsorted, engines that find each pair once or hand over pairs write them in place from their
/// own threads into address space reserved up front (no memory behind it until written); the
/// others fill a table's rows, cut into pairs when the join finishes. Sorted, on one thread the
/// pairs are collected and grouped by i (a two-level counting sort); on several, the rows are cut.
/// The memory budget counts 16 bytes a pair kept, and what is held until then.
class pairs_array_sink final : public result_sink {
 public:
  struct options {
    /// Whether the join will be a self-join, which keeps half the ordered pairs: what the
    /// memory budget is told before the join.
    bool self_join = true;
    /// Group by i, each group sorted by j.
    bool sort = false;
    /// Threads of the join, which the cut after it uses too (0: every core).
    unsigned threads = 0;
    /// The caller's host memory limit (0: none): with the machine's memory, the most the pairs
    /// may take, the address space reserved for pairs written in place.
    std::uint64_t memory_limit = 0;
    /// False: every engine fills rows, cut into pairs at the end (never handed over once).
    bool pairs_once = true;
  };
  explicit pairs_array_sink(const options& how);
  ~pairs_array_sink() override;
  sink_request request() const override;
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override;
  row_destination consume_counts(const count_batch& counts) override;
  void consume_rows(const row_segment& rows) override;
  void finish() override;
  /// @brief After the join: the pairs, handed over.
  std::unique_ptr<pairs_array> release();

 private:
  bool keep(std::uint32_t i, std::uint32_t j) const noexcept {
    return !self_join_ || j > i || (include_self_ && j == i);
  }
  void place(std::span<const std::uint32_t> is, std::span<const std::uint32_t> js);
  void collect(std::vector<index_pair> batch);

  bool sort_;
  unsigned threads_;
  bool collects_ = false;  // pairs collected, grouped at the end (sorted, one thread)
  bool self_join_ = true, include_self_ = false, rows_ = false;
  std::size_t n_queries_ = 0;
  std::unique_ptr<detail::placed_pairs> placed_;  // unsorted: pairs written in place
  csr_sink table_;                                // rows, cut at the end
  std::mutex mutex_;
  std::vector<std::vector<index_pair>> batches_;
  std::unique_ptr<pairs_array> result_;
};

}  // namespace epsjoin
