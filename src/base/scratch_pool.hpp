#pragma once
// Buffers for calls that may come from several threads at once (row blocks from several
// devices): a call borrows one, made on first need, and gives it back, so a block-sized buffer
// is allocated and faulted in once per concurrent caller rather than once per call. The
// buffers live as long as the pool (their owner's sink).

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace epsjoin::detail {

template <class Buffer>
class scratch_pool {
 public:
  class lease {
   public:
    lease(scratch_pool& pool, std::unique_ptr<Buffer> buffer)
        : pool_(pool), buffer_(std::move(buffer)) {}
    ~lease() { pool_.give_back(std::move(buffer_)); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    Buffer& operator*() const noexcept { return *buffer_; }
    Buffer* operator->() const noexcept { return buffer_.get(); }

   private:
    scratch_pool& pool_;
    std::unique_ptr<Buffer> buffer_;
  };

  lease borrow() {
    std::unique_ptr<Buffer> buffer;
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        buffer = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (buffer == nullptr) buffer = std::make_unique<Buffer>();
    return lease(*this, std::move(buffer));
  }

 private:
  void give_back(std::unique_ptr<Buffer> buffer) noexcept {
    std::lock_guard lock(mutex_);
    try {
      free_.push_back(std::move(buffer));
    } catch (...) {
      // No room to keep it: the buffer goes, and the next caller makes another.
    }
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<Buffer>> free_;
};

}  // namespace epsjoin::detail
