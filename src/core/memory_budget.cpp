#include "core/memory_budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace epsjoin::detail {

namespace {

constexpr std::uint64_t gib = std::uint64_t{1} << 30;
constexpr std::uint64_t device_headroom = std::uint64_t{512} << 20;

/// The number in a cgroup limit file, or 0 when it is absent or says "max" (no limit).
std::uint64_t read_cgroup_limit(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

}  // namespace

std::uint64_t machine_host_bytes() {
  const std::uint64_t physical = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                 static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE));
  std::uint64_t bytes = physical;
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const std::uint64_t limit = read_cgroup_limit(path);
    // cgroup v1 reports "no limit" as a huge number; anything above physical memory is that.
    if (limit > 0 && limit < bytes) bytes = limit;
  }
  return bytes;
}

memory_overrides read_memory_overrides(const param_map& params) {
  memory_overrides o;
  o.segment_ids = param_uint(params, "segment_ids", 0, 1);
  o.chunk_ids = param_uint(params, "chunk_ids", 0, 1);
  o.batch_pairs = param_uint(params, "batch_pairs", 0, 1);
  o.batches = param_uint(params, "batches", 0, 0);
  return o;
}

std::uint64_t memory_budget::host_bytes() const {
  const std::uint64_t machine = machine_host_bytes();
  return limits_.host_bytes > 0 ? std::min(limits_.host_bytes, machine) : machine;
}

std::uint64_t memory_budget::host_scratch_bytes() const {
  return std::min(gib, host_bytes() / 16);
}

std::uint64_t memory_budget::pinned_bytes() const { return host_bytes() / 8; }

std::uint64_t memory_budget::device_bytes(std::uint64_t free_bytes) const {
  const std::uint64_t available =
      limits_.device_bytes > 0 ? std::min(limits_.device_bytes, free_bytes) : free_bytes;
  return available > device_headroom ? (available - device_headroom) / 10 * 9 : 0;
}

}  // namespace epsjoin::detail
