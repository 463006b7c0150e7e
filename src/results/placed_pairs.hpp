#pragma once
// int64 (i, j) pairs written by the join's own threads where numpy will read them. A stretch of
// address space as large as the memory budget is reserved up front (MAP_NORESERVE: no memory
// behind it until a page is written), each batch of pairs claims its run of it with one atomic
// add, and the tail that was never claimed is given back afterwards. So the result is neither
// collected and copied nor grouped afterwards: its bytes are written once, in parallel, inside
// the join, in the order the engine finds them (bench/RESULTS.md, "Unique pairs written in
// place").

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "base/pages_ahead.hpp"
#include "epsjoin/error.hpp"

namespace epsjoin::detail {

class placed_pairs {
 public:
  /// Room for `max_pairs` pairs, or nullptr where the system refuses to reserve that much
  /// address space (strict overcommit, a small address-space limit); the caller then collects.
  static std::unique_ptr<placed_pairs> reserve(std::uint64_t max_pairs) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t bytes = (std::max<std::uint64_t>(max_pairs, 1) * pair_bytes + page - 1) / page * page;
    void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) return nullptr;
    // The pages a little ahead of the claims are faulted in on a thread of their own, in
    // ordinary pages. Measured on the 2-core machine, 1M 2-D points at S 50, one join thread
    // (bench/python_first_call.py): a process's first call took 1.6-3.3x its later ones with
    // huge pages advised and no such thread (fresh huge pages are slow to assemble; freed ones
    // come back fast), 1.5-2.2x with both, 0.8-1.2x with the thread alone, the later calls as
    // fast as before (0.29-0.44 s).
    std::unique_ptr<placed_pairs> placed(new placed_pairs(static_cast<std::int64_t*>(at), bytes, page));
    placed->ahead_ = std::make_unique<pages_ahead>(
        static_cast<char*>(at), bytes, populate_window,
        [p = placed.get()] { return static_cast<std::size_t>(p->size() * pair_bytes); });
    return placed;
  }
  /// The most the memory budget can let through: the machine's memory, or the user's limit where
  /// that is larger (the budget's own figure, bounded by a cgroup, is never above either).
  static std::uint64_t budget_bytes(std::uint64_t user_limit) {
    const auto physical = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    return std::max(physical, user_limit);
  }
  placed_pairs(const placed_pairs&) = delete;
  placed_pairs& operator=(const placed_pairs&) = delete;
  ~placed_pairs() {
    ahead_.reset();  // before the pages it populates go
    munmap(base_, mapped_bytes_);
  }

  /// Where the next `n` pairs go (2 n int64); safe from any number of threads at once.
  std::int64_t* claim(std::uint64_t n) {
    const std::uint64_t first = claimed_.fetch_add(n, std::memory_order_relaxed);
    if ((first + n) * pair_bytes > mapped_bytes_) {
      // The memory budget stops a result this large before it gets here (the sink's
      // bytes_kept_per_pair); reaching it is a bug, reported rather than written past.
      throw out_of_memory("internal: the pairs outgrew the " +
                                   std::to_string(mapped_bytes_) + " bytes reserved for them");
    }
    return base_ + 2 * first;
  }
  std::uint64_t size() const noexcept { return claimed_.load(std::memory_order_relaxed); }
  std::int64_t* data() noexcept { return base_; }
  /// Gives back the address space past the last claimed pair (after the join's threads end).
  void trim() noexcept {
    ahead_.reset();
    const std::size_t used = (size() * pair_bytes + page_ - 1) / page_ * page_;
    const std::size_t keep = std::max(used, page_);
    if (keep < mapped_bytes_ && munmap(reinterpret_cast<char*>(base_) + keep, mapped_bytes_ - keep) == 0) {
      mapped_bytes_ = keep;
    }
  }

 private:
  static constexpr std::size_t pair_bytes = 2 * sizeof(std::int64_t);
  // How far past the last claimed pair the pages are faulted in (the tail past the last pair is
  // given back by trim).
  static constexpr std::size_t populate_window = std::size_t{64} << 20;
  placed_pairs(std::int64_t* base, std::size_t bytes, std::size_t page)
      : base_(base), mapped_bytes_(bytes), page_(page) {}
  std::int64_t* base_;
  std::size_t mapped_bytes_;
  std::size_t page_;
  std::atomic<std::uint64_t> claimed_{0};
  std::unique_ptr<pages_ahead> ahead_;
};

}  // namespace epsjoin::detail
