#pragma once
// Per-thread buffering of result pairs, so sinks see large batches and lock rarely.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "epsjoin/sink.hpp"
#include "results/handover.hpp"

namespace epsjoin::detail {

class pair_emitter {
 public:
  /// What a flushed batch is: ordered pairs (`result_sink::consume`), or unordered pairs of a
  /// self-join, each (i, j) with i < j standing for both orientations (`hand_unordered`).
  enum class pair_kind { ordered, unordered };
  explicit pair_emitter(result_sink& sink, std::size_t capacity = std::size_t{1} << 15,
                        pair_kind kind = pair_kind::ordered)
      : sink_(&sink),
        kind_(kind),
        capacity_(std::max<std::size_t>(capacity, 1)),
        buffer_(new index_pair[capacity_]) {}
  pair_emitter(const pair_emitter&) = delete;
  pair_emitter& operator=(const pair_emitter&) = delete;
  pair_emitter(pair_emitter&&) noexcept = default;
  pair_emitter& operator=(pair_emitter&&) noexcept = default;

  void emit(std::uint32_t query, std::uint32_t neighbor) {
    buffer_[size_++] = {query, neighbor};
    if (size_ == capacity_) flush();
  }
  /// Room for up to `count` (<= capacity()) pairs, written by the caller before commit(); lets
  /// a loop store pairs without a capacity check per pair.
  index_pair* reserve(std::size_t count) {
    if (capacity_ - size_ < count) flush();
    return buffer_.get() + size_;
  }
  /// Adds the first `count` pairs written through the last reserve().
  void commit(std::size_t count) {
    size_ += count;
    if (size_ == capacity_) flush();
  }
  std::size_t capacity() const noexcept { return capacity_; }
  /// Must be called before the emitter goes away; the destructor does not (it could throw).
  void flush() {
    if (size_ == 0) return;
    const std::span<const index_pair> batch(buffer_.get(), size_);
    if (kind_ == pair_kind::unordered) {
      hand_unordered(*sink_, batch, queries_, neighbors_);
    } else {
      sink_->consume(batch);
    }
    size_ = 0;
  }

 private:
  result_sink* sink_;
  pair_kind kind_;
  std::size_t capacity_;
  std::unique_ptr<index_pair[]> buffer_;
  std::size_t size_ = 0;
  std::vector<std::uint32_t> queries_, neighbors_;  // an unordered batch, as rows
};

}  // namespace epsjoin::detail
