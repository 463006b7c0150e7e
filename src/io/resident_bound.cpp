#include "io/resident_bound.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace epsjoin::detail {

namespace {

// Below the limit by this much the pages go, so that what is written while the watcher sleeps
// (1 ms, a few MB at the fill rates measured) stays under the limit.
std::uint64_t margin_for(std::uint64_t limit) {
  return std::min<std::uint64_t>(limit / 16, std::uint64_t{64} << 20);
}

// Dropping is worth it only when the mapping holds this much: under it the process is over the
// limit by its other memory, which dropping file pages cannot help (and would only churn).
constexpr std::uint64_t least_worth_dropping = std::uint64_t{8} << 20;

// The process's resident memory and the shared (file and shmem) part of it, in bytes; zeros
// where /proc/self/statm cannot be read.
struct resident_memory {
  std::uint64_t total = 0;
  std::uint64_t shared = 0;
};

resident_memory read_resident_memory() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return {};
  unsigned long long size = 0, resident = 0, shared = 0;
  const int got = std::fscanf(f, "%llu %llu %llu", &size, &resident, &shared);
  std::fclose(f);
  if (got != 3) return {};
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return {resident * page, shared * page};
}

}  // namespace

resident_bound::resident_bound(char* data, std::uint64_t bytes, std::uint64_t limit)
    : data_(data), bytes_(bytes) {
  if (limit == 0 || bytes == 0 || read_resident_memory().total == 0) return;
  trigger_ = limit - margin_for(limit);
  thread_ = std::jthread([this](const std::stop_token& stop) { watch(stop); });
}

void resident_bound::watch(const std::stop_token& stop) {
  const std::uint64_t shared_before = read_resident_memory().shared;
  while (!stop.stop_requested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const resident_memory now = read_resident_memory();
    if (now.total > trigger_ && now.shared > shared_before + least_worth_dropping) drop();
  }
}

void resident_bound::drop() {
  // No sync_file_range first: on a disk file system it waits while it queues the writes (tens
  // of ms for a few hundred MB), and the fill races past the watcher meanwhile. The kernel's
  // own writeback cleans the pages; the process's share of them is what the limit bounds.
  (void)::madvise(data_, bytes_, MADV_DONTNEED);
}

}  // namespace epsjoin::detail
