#include "io/unfinished.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "io/output_target.hpp"

namespace epsjoin {

namespace detail {

namespace {

// Fixed storage, because a signal handler may neither allocate nor take a lock: a slot's path is
// written while the slot is reserved (state 1), then published (state 2); the handler reads only
// published slots.
constexpr std::size_t max_unfinished = 64;
constexpr std::size_t max_path = 4096;
struct slot {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 published
  char path[max_path];
};
std::array<slot, max_unfinished> slots;

}  // namespace

std::string unfinished_name(const std::string& path) {
  return path + ".unfinished-" + std::to_string(::getpid());
}

unfinished_output::unfinished_output(const std::string& temporary_path) {
  if (temporary_path.size() >= max_path) return;  // too long to track: the destructor still cleans
  for (std::size_t i = 0; i < max_unfinished; ++i) {
    int expected = 0;
    if (!slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(slots[i].path, temporary_path.c_str(), temporary_path.size() + 1);
    slots[i].state.store(2, std::memory_order_release);
    slot_ = static_cast<int>(i);
    return;
  }
}

unfinished_output::~unfinished_output() {
  if (slot_ >= 0) slots[static_cast<std::size_t>(slot_)].state.store(0);
}

}  // namespace detail

void remove_unfinished_outputs() noexcept {
  for (auto& s : detail::slots) {
    if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
  }
}

output_target check_output_path(const std::string& path) { return detail::resolve_output(path); }

}  // namespace epsjoin
