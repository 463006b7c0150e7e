#pragma once
// Per-thread buffering of result pairs, so sinks see large batches and lock rarely.

#include <cstdint>
#include <vector>

#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

class pair_emitter {
 public:
  explicit pair_emitter(result_sink& sink, std::size_t capacity = std::size_t{1} << 15)
      : sink_(&sink), capacity_(capacity) {
    buffer_.reserve(capacity_);
  }
  pair_emitter(const pair_emitter&) = delete;
  pair_emitter& operator=(const pair_emitter&) = delete;
  pair_emitter(pair_emitter&&) noexcept = default;
  pair_emitter& operator=(pair_emitter&&) noexcept = default;

  void emit(std::uint32_t query, std::uint32_t neighbor) {
    buffer_.push_back({query, neighbor});
    if (buffer_.size() == capacity_) flush();
  }
  /// Must be called before the emitter goes away; the destructor does not (it could throw).
  void flush() {
    if (buffer_.empty()) return;
    sink_->consume(buffer_);
    buffer_.clear();
  }

 private:
  result_sink* sink_;
  std::size_t capacity_;
  std::vector<index_pair> buffer_;
};

}  // namespace epsjoin::detail
