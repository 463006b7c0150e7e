#pragma once
// The one memory budget every planner asks (DESIGN.md, Memory). The user's limits come from
// resources (host and device bytes; 0 means what the machine allows); the rules that turn them
// into a planner's share live here and nowhere else, so no engine has a rule of its own.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "base/params.hpp"
#include "epsjoin/resources.hpp"

namespace epsjoin::detail {

/// Sizes forced by tests and ablations instead of what the budget allows, so the multi-segment,
/// multi-chunk and multi-batch paths run on small inputs. 0 leaves a size to the budget.
/// Parsed once from the join's parameters of the same names (engines accept them through param_reader::memory_override).
struct memory_overrides {
  std::uint64_t segment_ids = 0;  ///< ids per device segment of the row pipeline
  std::uint64_t chunk_ids = 0;    ///< ids per pinned chunk of the row pipeline
  std::uint64_t batch_pairs = 0;  ///< pairs per result batch of the pair pipeline
  std::uint64_t batches = 0;      ///< pair pipeline: plan this many batches of batch_pairs
};

class memory_budget;

/// One item of what a join's path holds beside its result at its peak (memory_budget::
/// require_path): "the row cursors", 80 MiB.
struct host_need {
  std::string what;
  std::uint64_t bytes = 0;
};

/// Host memory an engine holds beside its result (see memory_budget::charge_host), given back
/// when this goes.
class [[nodiscard]] host_charge {
 public:
  host_charge() = default;
  host_charge(host_charge&& other) noexcept;
  host_charge& operator=(host_charge&& other) noexcept;
  host_charge(const host_charge&) = delete;
  host_charge& operator=(const host_charge&) = delete;
  ~host_charge();
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  friend class memory_budget;
  host_charge(memory_budget* budget, std::uint64_t bytes) noexcept
      : budget_(budget), bytes_(bytes) {}
  memory_budget* budget_ = nullptr;
  std::uint64_t bytes_ = 0;
};

class memory_budget {
 public:
  memory_budget() = default;
  memory_budget(const memory_limits& limits, const memory_overrides& overrides)
      : limits_(limits), overrides_(overrides) {}

  /// Host bytes a join may use: the user's limit, else what the machine and its cgroup allow.
  std::uint64_t host_bytes() const;
  /// Host bytes a result held in memory may take now: the user's limit when set, else what the
  /// machine had available (MemAvailable) and its cgroup had left, whichever is less, when this
  /// budget was first asked (the join's start: what it allocates since is charged, not counted
  /// twice); in both cases less what the join holds through charge_host.
  std::uint64_t host_available() const;
  /// Host memory the engine is about to hold beside the result while the returned charge lives
  /// (its copy of the points, its index, its counts, the row cursors of rows written in place):
  /// refused as a result over the limit is (require_host), else taken off host_available(), so
  /// the table laid out next is checked against what is left.
  host_charge charge_host(std::uint64_t bytes, const char* what);
  /// Memory the join holds already and cannot give back (the points it was given): taken off
  /// host_available() while the returned charge lives, never refused here; a path that cannot
  /// fit beside it is refused by require_path.
  host_charge account_host(std::uint64_t bytes) noexcept {
    add_charge(bytes);
    return host_charge(this, bytes);
  }
  /// charge_host for memory held until the join ends (the neighbour table a sink keeps).
  void hold_host(std::uint64_t bytes, const char* what);
  /// Throws out_of_memory, before any of it is allocated, when what a join's path holds beside
  /// its result at its peak (`needs`, held together) does not fit host_available(); the message
  /// names each item, so a limit too small for the path says what the path needs. The items are
  /// charged (charge_host) as they are made; `held` bytes of them are charged already.
  /// `at_least`: some of the path is not known yet, and the message says the figure is a lower
  /// bound.
  void require_path(std::span<const host_need> needs, std::uint64_t held = 0,
                    bool at_least = false) const;
  /// Throws out_of_memory, before anything is allocated, when a result of `bytes` held in memory
  /// would not fit host_available(); the message says what it needs, what there is and what to do.
  void require_host(std::uint64_t bytes, const char* what) const;
  /// The same against `available` bytes measured earlier (a result that grows as it arrives).
  void require_host(std::uint64_t bytes, std::uint64_t available, const char* what) const;
  /// The same for a result estimated before the work: refused when even `at_least` (a lower
  /// bound of what it will need) does not fit host_available(); `basis` says how it was
  /// estimated, in words for the message.
  void require_host_at_least(std::uint64_t at_least, const char* what,
                             const std::string& basis) const;
  /// The same against `available` bytes measured earlier (pairs stopped as they arrive).
  void require_host_at_least(std::uint64_t at_least, std::uint64_t available, const char* what,
                             const std::string& basis) const;
  /// Host scratch one planner may keep for speed only (stored neighbour ranges, per-thread count
  /// arrays): 1 GiB, or a sixteenth of host_bytes() under a smaller limit. Past it, planners
  /// recompute instead of storing.
  std::uint64_t host_scratch_bytes() const;
  /// Page-locked staging buffers in all: an eighth of host_bytes(), since locked pages are taken
  /// from everything else on the machine.
  std::uint64_t pinned_bytes() const;
  /// Device bytes a planner may claim now, when the device reports `free_bytes` free: the
  /// smaller of that and the user's device limit, less a headroom of 512 MiB and 10% for the
  /// index's growth, CUB's scratch and other users of the device.
  std::uint64_t device_bytes(std::uint64_t free_bytes) const;

  /// Tells the messages that the result streams out (a file, a callback) and needs no memory
  /// of its own: what a refusal then names is what the join needs beside it, and the way out
  /// is a higher limit, not writing to a file.
  void set_result_streamed(bool streamed) noexcept { result_streamed_ = streamed; }

  const memory_limits& limits() const noexcept { return limits_; }
  const memory_overrides& overrides() const noexcept { return overrides_; }
  /// Host bytes held through charge_host now.
  std::uint64_t host_charged() const noexcept { return charged_; }
  /// The most host bytes held through charge_host and hold_host at once so far.
  std::uint64_t host_charged_peak() const noexcept { return peak_; }

 private:
  friend class host_charge;
  /// Throws the out_of_memory of every refusal: what is needed (`needs`, of which `bytes`),
  /// what there is, what to do.
  /// What host_available() is before the charges.
  std::uint64_t host_base() const;
  [[noreturn]] void refuse_host(const std::string& needs, std::uint64_t bytes,
                                std::uint64_t available) const;
  void add_charge(std::uint64_t bytes) noexcept {
    charged_ += bytes;
    peak_ = std::max(peak_, charged_);
  }
  memory_limits limits_;
  memory_overrides overrides_;
  // Charged and given back by the thread that plans the join, never concurrently.
  std::uint64_t charged_ = 0;
  std::uint64_t peak_ = 0;
  // What the machine had available when first asked (no user limit); 0 until then.
  mutable std::uint64_t machine_available_ = 0;
  bool result_streamed_ = false;
};

/// The overrides among a join's parameters (each engine declares the ones it honours, as
/// param_reader::memory_override); absent keys leave their size to the budget.
memory_overrides read_memory_overrides(const param_map& params);

/// Bytes for a message: "512 bytes", "4.0 KiB", "185.0 GiB".
std::string human_bytes(std::uint64_t bytes);

/// Host memory of this machine as its cgroup (v2 memory.max, v1 memory.limit_in_bytes) bounds it.
std::uint64_t machine_host_bytes();

}  // namespace epsjoin::detail
