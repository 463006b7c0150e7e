#pragma once
// Where a worker's hits go: ordered pairs for a pair sink, or per-point counts for a counts-only
// sink. Both buffer in fixed arrays and append without a branch per entry: in low dimensions
// the hand-over costs as much as the distances.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/row_cursors.hpp"
#include "cpu/super_ego/ego_simd.hpp"
#include "cpu/super_ego/sorted_points.hpp"
#include "epsjoin/sink.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail::ego {

/// Hands every match to the sink as ordered pairs of the caller's ids; both directions in a
/// self-join, or, with `once` (a sink that keeps unordered pairs), each self-join pair once as
/// (min, max) as unordered rows (`hand_unordered`). (Its own buffer rather than the core pair_emitter: a
/// row's pairs are written with one capacity check instead of one per pair.)
template <class T>
class pair_output {
 public:
  static constexpr bool counts = false;
  pair_output(result_sink& sink, const sorted_points<T>& a, const sorted_points<T>& b, bool self,
              std::size_t leaf, bool once = false)
      : sink_(&sink), a_ids_(a.ids.data()), b_ids_(b.ids.data()), self_(self),
        once_(self && once), buffer_(std::max<std::size_t>(std::size_t{1} << 15, 2 * leaf + 2)) {}
  void begin_chunk(std::size_t, std::size_t) {}
  void end_chunk() {}
  void begin_leaf(std::size_t, std::size_t) {}
  void end_leaf() {}
  /// A position i's matches: B positions js[0, m).
  void row(std::size_t i, const std::uint32_t* js, std::size_t m) {
    if (size_ + 2 * m > buffer_.size()) flush();
    const std::uint32_t qi = a_ids_[i];
    index_pair* out = buffer_.data() + size_;
    if (once_) {
      for (std::size_t k = 0; k < m; ++k) {
        const std::uint32_t nj = b_ids_[js[k]];
        out[k] = {std::min(qi, nj), std::max(qi, nj)};
      }
      size_ += m;
    } else if (self_) {
      for (std::size_t k = 0; k < m; ++k) {
        const std::uint32_t nj = b_ids_[js[k]];
        out[2 * k] = {qi, nj};
        out[2 * k + 1] = {nj, qi};
      }
      size_ += 2 * m;
    } else {
      for (std::size_t k = 0; k < m; ++k) out[k] = {qi, b_ids_[js[k]]};
      size_ += m;
    }
  }
  void flush() {
    if (size_ == 0) return;
    const std::span<const index_pair> batch(buffer_.data(), size_);
    if (once_) {
      hand_unordered(*sink_, batch, once_queries_, once_neighbors_);
    } else {
      sink_->consume(batch);
    }
    size_ = 0;
  }

 private:
  result_sink* sink_;
  const std::uint32_t* a_ids_;
  const std::uint32_t* b_ids_;
  bool self_;
  bool once_;
  std::vector<index_pair> buffer_;
  std::size_t size_ = 0;
  std::vector<std::uint32_t> once_queries_, once_neighbors_;
};

/// Writes a CSR table's rows in place, laid out by a count pass: a position i's matches go into
/// its own row in one run and, in a self-join, i goes into each match's row (each pair is
/// found once). Rows are claimed through cursors by A position (B's are A's in a self-join).
template <class T>
class row_output {
 public:
  static constexpr bool counts = false;
  row_output(const row_cursors& rows, const sorted_points<T>& a, const sorted_points<T>& b,
             bool self)
      : rows_(&rows), a_ids_(a.ids.data()), b_ids_(b.ids.data()), self_(self) {}
  void begin_chunk(std::size_t, std::size_t) {}
  void end_chunk() {}
  void begin_leaf(std::size_t, std::size_t) {}
  void end_leaf() {}
  void row(std::size_t i, const std::uint32_t* js, std::size_t m) {
    const auto position = static_cast<std::uint32_t>(i);
    std::uint32_t* own = rows_->claim(position, m);
    for (std::size_t k = 0; k < m; ++k) own[k] = b_ids_[js[k]];
    if (self_) {
      const std::uint32_t qi = a_ids_[i];
      for (std::size_t k = 0; k < m; ++k) *rows_->claim(js[k], 1) = qi;
    }
  }
  void flush() {}

 private:
  const row_cursors* rows_;
  const std::uint32_t* a_ids_;
  const std::uint32_t* b_ids_;
  bool self_;
};

/// For counts-only sinks: per-query counts summed over a work item (and, in a self-join, the
/// reverse direction's per-candidate counts over a leaf), handed over as (id, count) entries
/// rather than one entry per pair.
template <class T>
class count_output {
 public:
  static constexpr bool counts = true;
  count_output(result_sink& sink, const sorted_points<T>& a, const sorted_points<T>& b,
               bool self, std::size_t chunk, std::size_t leaf)
      : sink_(&sink), a_ids_(a.ids.data()), b_ids_(b.ids.data()), self_(self), rows_(chunk, 0),
        cols_(leaf + simd_pad, 0),
        ids_(std::max<std::size_t>(std::size_t{1} << 14, chunk + leaf)),
        counts_(ids_.size()) {}
  void begin_chunk(std::size_t a0, std::size_t a1) {
    a0_ = a0;
    a1_ = a1;
    std::fill_n(rows_.begin(), a1 - a0, 0u);
  }
  void end_chunk() {
    reserve(a1_ - a0_);
    for (std::size_t i = a0_; i < a1_; ++i) append(a_ids_[i], rows_[i - a0_]);
  }
  void begin_leaf(std::size_t b0, std::size_t b1) {
    b0_ = b0;
    b1_ = b1;
  }
  void end_leaf() {
    if (self_) {
      reserve(b1_ - b0_);
      for (std::size_t j = b0_; j < b1_; ++j) {
        append(b_ids_[j], static_cast<std::uint32_t>(cols_[j - b0_]));
      }
    }
    std::fill_n(cols_.begin(), b1_ - b0_, lane_count<T>{0});
  }
  /// Per-candidate counters of the current leaf, indexed by B position - b0.
  lane_count<T>* columns() { return cols_.data(); }
  void add_row(std::size_t i, std::size_t m) { rows_[i - a0_] += static_cast<std::uint32_t>(m); }
  void flush() {
    if (size_ == 0) return;
    hand_counts(*sink_, std::span<const std::uint32_t>(ids_.data(), size_),
                std::span<const std::uint32_t>(counts_.data(), size_));
    size_ = 0;
  }

 private:
  void reserve(std::size_t k) {
    if (size_ + k > ids_.size()) flush();
  }
  // Written always, kept only when count > 0.
  void append(std::uint32_t id, std::uint32_t count) {
    ids_[size_] = id;
    counts_[size_] = count;
    size_ += count != 0 ? 1 : 0;
  }
  result_sink* sink_;
  const std::uint32_t* a_ids_;
  const std::uint32_t* b_ids_;
  bool self_;
  std::vector<std::uint32_t> rows_;
  std::vector<lane_count<T>> cols_;
  std::vector<std::uint32_t> ids_, counts_;
  std::size_t size_ = 0;
  std::size_t a0_ = 0, a1_ = 0, b0_ = 0, b1_ = 0;
};

}  // namespace epsjoin::detail::ego
