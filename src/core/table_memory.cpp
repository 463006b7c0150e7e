#include <cstdlib>
#include <new>

#include "epsjoin/result.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace epsjoin::detail {

namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;
}

void* allocate_table_memory(std::size_t bytes) {
  const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
  void* p = std::aligned_alloc(huge_page, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: without transparent huge pages the memory is simply used in 4 KiB pages.
  (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void free_table_memory(void* p, std::size_t) noexcept { std::free(p); }

}  // namespace epsjoin::detail
