#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace epsjoin::detail {

// An array written in full before it is read. Not value-initialised: for the hundreds of
// megabytes of a large join that would be a memset and the page faults on one thread, before the
// threads that fill it.
template <class T>
class fresh_array {
 public:
  fresh_array() = default;
  explicit fresh_array(std::size_t n) : data_(std::make_unique_for_overwrite<T[]>(n)), size_(n) {}
  T* data() noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::span<const T> span() const noexcept { return {data_.get(), size_}; }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_ = 0;
};

}  // namespace epsjoin::detail
