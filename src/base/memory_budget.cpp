#include "base/memory_budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>

#include "base/expects.hpp"
#include "epsjoin/error.hpp"

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

std::uint64_t read_machine_host_bytes() {
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

}  // namespace

std::uint64_t machine_host_bytes() {
  // Read once: the machine's memory and its cgroup's limit do not change under a running join,
  // and planners ask for it several times a join.
  static const std::uint64_t bytes = read_machine_host_bytes();
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

namespace {

/// MemAvailable from /proc/meminfo in bytes, or 0 when it cannot be read.
std::uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t value = 0;
  while (in >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024;
  }
  return 0;
}

/// What the cgroup (v2) still allows: memory.max less memory.current; 0 when unbounded.
std::uint64_t cgroup_left() {
  const std::uint64_t max = read_cgroup_limit("/sys/fs/cgroup/memory.max");
  if (max == 0) return 0;
  const std::uint64_t current = read_cgroup_limit("/sys/fs/cgroup/memory.current");
  return max > current ? max - current : 1;
}

/// The host memory available now (MemAvailable, within the cgroup's room), read at most every
/// 50 ms: three file opens cost 40-80 us, which was half of a one-point eps_index query's time
/// (issue 46); what is available does not move by much between calls that close.
std::uint64_t available_now() {
  static std::mutex mutex;
  static std::chrono::steady_clock::time_point read_at;
  static std::uint64_t available = 0;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex);
  if (available != 0 && now - read_at < std::chrono::milliseconds(50)) return available;
  available = mem_available();
  if (available == 0) available = machine_host_bytes();
  const std::uint64_t left = cgroup_left();
  if (left > 0) available = std::min(available, left);
  read_at = now;
  return available;
}

}  // namespace

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024 && u < 5) {
    value /= 1024;
    ++u;
  }
  if (u == 0) return concat(bytes, " bytes");
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[u]);
  return text;
}

std::uint64_t memory_budget::host_available() const {
  const std::uint64_t available = host_base();
  return available > charged_ ? available - charged_ : 0;
}

std::uint64_t memory_budget::host_base() const {
  std::uint64_t available = limits_.host_bytes;
  if (available == 0) {
    // Read once: the join's own allocations since are charged, and would otherwise be taken
    // off twice (once from MemAvailable, once as charges).
    if (machine_available_ == 0) machine_available_ = available_now();
    available = machine_available_;
  }
  return available;
}

host_charge memory_budget::charge_host(std::uint64_t bytes, const char* what) {
  require_host(bytes, what);
  add_charge(bytes);
  return host_charge(this, bytes);
}

void memory_budget::hold_host(std::uint64_t bytes, const char* what) {
  require_host(bytes, what);
  add_charge(bytes);
}

void memory_budget::require_path(std::span<const host_need> needs, std::uint64_t held,
                                 bool at_least) const {
  std::uint64_t total = 0;
  for (const host_need& n : needs) total += n.bytes;
  // What the items may take: what is available, plus what of them is charged already.
  const std::uint64_t others = charged_ - std::min(held, charged_);
  const std::uint64_t base = host_base();
  const std::uint64_t available = base > others ? base - others : 0;
  if (total <= available) return;
  std::string items;
  for (const host_need& n : needs) {
    if (n.bytes == 0) continue;
    items += concat(items.empty() ? "" : ", ", n.what, " ", human_bytes(n.bytes));
  }
  const std::string needed = concat("the join itself needs ", at_least ? "at least " : "",
                                    human_bytes(total),
                                    " of host memory beside its result (", items, ") but ",
                                    human_bytes(available));
  if (limits_.host_bytes == 0) {
    throw out_of_memory(concat(needed, " are available: join fewer points at a time"));
  }
  // The limit that would have let it through: what it leaves less what is available, plus this.
  const std::uint64_t enough = limits_.host_bytes - std::min(available, limits_.host_bytes) + total;
  const std::string others_held =
      charged_ > held ? concat(", less ", human_bytes(charged_ - held), " the join holds already")
                      : std::string();
  throw out_of_memory(concat(needed, " are allowed (the memory limit", others_held, "); ",
                             result_streamed_ ? "the result itself streams out and needs none, "
                                                "but the join needs this beside it: "
                                              : "",
                             "raise the limit (--memory-limit) to at least ", human_bytes(enough),
                             result_streamed_ ? "" : ", and more for the result held in memory"));
}

host_charge::host_charge(host_charge&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

host_charge& host_charge::operator=(host_charge&& other) noexcept {
  if (this != &other) {
    if (budget_ != nullptr) budget_->charged_ -= bytes_;
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

host_charge::~host_charge() {
  if (budget_ != nullptr) budget_->charged_ -= bytes_;
}

void memory_budget::require_host(std::uint64_t bytes, const char* what) const {
  require_host(bytes, host_available(), what);
}

void memory_budget::require_host(std::uint64_t bytes, std::uint64_t available,
                                 const char* what) const {
  if (bytes <= available) return;
  refuse_host(concat(what, " needs ", human_bytes(bytes), " of host memory"), bytes, available);
}

void memory_budget::require_host_at_least(std::uint64_t at_least, const char* what,
                                          const std::string& basis) const {
  require_host_at_least(at_least, host_available(), what, basis);
}

void memory_budget::require_host_at_least(std::uint64_t at_least, std::uint64_t available,
                                          const char* what, const std::string& basis) const {
  if (at_least <= available) return;
  refuse_host(
      concat(what, " needs at least ", human_bytes(at_least), " of host memory (", basis, ")"),
      at_least, available);
}

void memory_budget::refuse_host(const std::string& needs, std::uint64_t bytes,
                                std::uint64_t available) const {
  if (result_streamed_ && limits_.host_bytes > 0) {
    // The limit that would have let it through: what it leaves less what is available, plus this.
    const std::uint64_t enough = limits_.host_bytes - std::min(available, limits_.host_bytes) + bytes;
    throw out_of_memory(concat(
        needs, " but ", human_bytes(available), " are allowed (the memory limit",
        charged_ > 0 ? concat(", less ", human_bytes(charged_), " the join holds already")
                     : std::string(),
        "); the result itself streams out and needs none, but the join needs this beside it: "
        "raise the limit (--memory-limit) to at least ", human_bytes(enough)));
  }
  throw out_of_memory(
      concat(needs, " but ", human_bytes(available),
             limits_.host_bytes > 0 ? " are allowed (the memory limit" : " are available",
             limits_.host_bytes > 0 && charged_ > 0
                 ? concat(", less ", human_bytes(charged_), " the join holds already)")
                 : std::string(limits_.host_bytes > 0 ? ")" : ""),
             ": write it to a file (epsjoin join --output FILE streams it), count it instead "
             "(--format count), or raise the limit (--memory-limit)"));
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
