#include "base/pages_ahead.hpp"

#include <algorithm>
#include <chrono>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace epsjoin::detail {

namespace {

#if defined(__linux__)
constexpr int populate_write = 23;  // MADV_POPULATE_WRITE, where the C library's header lacks it
#endif

// One request at a time: the thread hears `stop` between them.
constexpr std::size_t step_bytes = std::size_t{2} << 20;
// madvise takes whole pages; 4 KiB divides every page size Linux uses.
constexpr std::size_t page_bytes = 4096;

// False where the kernel cannot populate (before 5.14: EINVAL); the thread then ends.
bool populate(char* from, std::size_t bytes) {
#if defined(__linux__)
  return ::madvise(from, bytes, populate_write) == 0;
#else
  (void)from;
  (void)bytes;
  return false;
#endif
}

}  // namespace

pages_ahead::pages_ahead(char* data, std::size_t bytes, std::size_t window,
                         std::function<std::size_t()> written)
    : data_(data),
      bytes_(bytes),
      window_(window),
      written_(std::move(written)),
      thread_([this](const std::stop_token& stop) { run(stop); }) {}

void pages_ahead::run(const std::stop_token& stop) {
  std::size_t done = 0;
  while (!stop.stop_requested() && done < bytes_) {
    const std::size_t target = std::min(bytes_, written_() + window_);
    if (done >= target) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    // The memory is page-aligned (a mapping of whole pages); each step ends on a page.
    const std::size_t end = std::min(
        bytes_, (std::min(target, done + step_bytes) + page_bytes - 1) / page_bytes * page_bytes);
    if (!populate(data_ + done, end - done)) return;
    done = end;
  }
}

}  // namespace epsjoin::detail
