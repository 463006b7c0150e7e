#pragma once
// Vectors for super-ego's large per-point arrays. Two differences from std::vector<T>:
// - blocks of 4 MiB and more are 2 MiB aligned and marked for transparent huge pages (Linux
//   madvise; elsewhere a no-op), because first touching fresh 4 KiB pages cost about 0.5 ms per
//   MiB on the development machine, a quarter of a whole Expo2D 1e6 self-join;
// - resize(n) leaves new elements default-initialised (indeterminate for arithmetic types),
//   because every such array is written in full right after it is sized.

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace epsjoin::detail::ego {

template <class T>
struct big_allocator {
  using value_type = T;
  static constexpr std::size_t huge_page = std::size_t{2} << 20;
  static constexpr std::size_t threshold = std::size_t{4} << 20;

  big_allocator() noexcept = default;
  template <class U>
  big_allocator(const big_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < threshold) return std::allocator<T>{}.allocate(n);
    const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
    void* p = std::aligned_alloc(huge_page, rounded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failing changes nothing but speed
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < threshold) {
      std::allocator<T>{}.deallocate(p, n);
    } else {
      std::free(p);
    }
  }
  /// Default-initialise (not value-initialise) on resize; other constructions as usual.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const big_allocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using big_vector = std::vector<T, big_allocator<T>>;

}  // namespace epsjoin::detail::ego
