// base/pages_ahead: fresh pages are faulted in ahead of the writers, never further than the
// window past what they claimed, and never change a byte already written.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "base/pages_ahead.hpp"

namespace epsjoin::detail {
namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

std::size_t resident_bytes(char* data, std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (mincore(data, bytes, in_core.data()) != 0) return 0;
  std::size_t resident = 0;
  for (unsigned char c : in_core) resident += (c & 1) * page;
  return resident;
}

// Waits up to five seconds for at least `want` resident bytes.
std::size_t wait_for_resident(char* data, std::size_t bytes, std::size_t want) {
  std::size_t have = 0;
  for (int k = 0; k < 500 && (have = resident_bytes(data, bytes)) < want; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return have;
}

class mapping {
 public:
  explicit mapping(std::size_t bytes) : bytes_(bytes) {
    void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = at == MAP_FAILED ? nullptr : static_cast<char*>(at);
  }
  ~mapping() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  char* data() const { return data_; }

 private:
  char* data_;
  std::size_t bytes_;
};

bool kernel_populates() {
  mapping probe(4096);
  return probe.data() != nullptr && madvise(probe.data(), 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
}

TEST(pages_ahead, faults_pages_in_up_to_the_window_past_the_writers) {
  if (!kernel_populates()) GTEST_SKIP() << "the kernel has no MADV_POPULATE_WRITE (Linux < 5.14)";
  const std::size_t bytes = 64 * mib, window = 8 * mib;
  mapping memory(bytes);
  ASSERT_NE(memory.data(), nullptr);
  // Written before the thread starts, and at the end: populating must not change them.
  std::memset(memory.data(), 0x5a, 4096);
  std::memcpy(memory.data() + bytes - 4096, "tail", 4);
  std::atomic<std::size_t> written{0};
  {
    pages_ahead ahead(memory.data(), bytes, window, [&] { return written.load(); });
    // The first page, already there, plus the window; the last page was written too.
    const std::size_t first = wait_for_resident(memory.data(), bytes, window);
    EXPECT_GE(first, window);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_LE(resident_bytes(memory.data(), bytes), window + 2 * 4096)
        << "no further than the window past what was claimed";
    written.store(40 * mib);
    EXPECT_GE(wait_for_resident(memory.data(), bytes, 48 * mib), 48 * mib);
    EXPECT_LE(resident_bytes(memory.data(), bytes), 48 * mib + 4096);
  }
  for (std::size_t k = 0; k < 4096; ++k) ASSERT_EQ(memory.data()[k], 0x5a);
  EXPECT_EQ(std::memcmp(memory.data() + bytes - 4096, "tail", 4), 0);
  EXPECT_EQ(memory.data()[20 * mib], 0) << "populated pages are fresh zero pages";
}

TEST(pages_ahead, stops_at_once_and_goes_no_further) {
  if (!kernel_populates()) GTEST_SKIP() << "the kernel has no MADV_POPULATE_WRITE (Linux < 5.14)";
  const std::size_t bytes = 256 * mib;
  mapping memory(bytes);
  ASSERT_NE(memory.data(), nullptr);
  std::size_t at_stop = 0;
  {
    pages_ahead ahead(memory.data(), bytes, bytes, [] { return std::size_t{0}; });
    ahead.stop();
    at_stop = resident_bytes(memory.data(), bytes);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(resident_bytes(memory.data(), bytes), at_stop);
}

}  // namespace
}  // namespace epsjoin::detail
