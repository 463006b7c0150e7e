#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace epsjoin::detail {

// An array written in full before it is read. Not value-initialised: for the hundreds of
// megabytes of a large join that would be a memset and the page faults on one thread, before the
// threads that fill it. A large one is aligned to 2 MiB and advised to be backed by transparent
// huge pages: the many threads that fill it would otherwise take a page fault every 4 KiB, and
// those serialise on the process's memory map (a device's slab of 100M points is 400,000 faults).
template <class T>
class fresh_array {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "fresh_array holds plain values, written before they are read");

 public:
  fresh_array() = default;
  explicit fresh_array(std::size_t n) : data_(allocate(n)), size_(n) {}
  T* data() noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::span<const T> span() const noexcept { return {data_.get(), size_}; }

 private:
  static constexpr std::size_t huge_page = std::size_t{2} << 20;
  static constexpr std::size_t huge_from = 16 * huge_page;

  struct release {
    void operator()(T* p) const noexcept { std::free(p); }
  };

  static std::unique_ptr<T[], release> allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes == 0) return nullptr;
    const bool huge = bytes >= huge_from;
    const std::size_t alignment = huge ? huge_page : alignof(std::max_align_t);
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(std::max(alignment, alignof(T)), rounded);
    if (p == nullptr) throw std::bad_alloc();
#ifdef __linux__
    // Advice only: where huge pages are off it changes nothing.
    if (huge) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return std::unique_ptr<T[], release>(static_cast<T*>(p));
  }

  std::unique_ptr<T[], release> data_;
  std::size_t size_ = 0;
};

}  // namespace epsjoin::detail
