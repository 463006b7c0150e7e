#pragma once
/// @file resources.hpp
/// @brief Long-lived execution resources passed first to every entry point.
///
/// One object owns the CPU thread count and, once a GPU engine first needs them, the device
/// streams, device buffers and pinned staging buffers. Reuse one object across joins so those
/// allocations are paid once.
/// @code
///   epsjoin::resources res;            // all hardware threads, device 0
///   res.set_threads(4);
/// @endcode

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace epsjoin {

/// @brief Upper bounds on the memory a join may use; 0 means what the machine allows (host: its
///        physical memory as its cgroup bounds it; device: what the device reports free).
///        Every engine plans its buffers, segments and batches within them.
struct memory_limits {
  std::uint64_t host_bytes = 0;
  std::uint64_t device_bytes = 0;
};

namespace detail {
struct gpu_state;  // defined by the CUDA part of the library only
}

/// @brief How one join over several devices (resources::devices()) divides its work.
enum class device_split {
  /// Work items for a counts-only self-join on a row-join engine whose slabs would have a halo
  /// of more than a fifth of the points (high dimensions), slabs (A x B: dealt queries) otherwise.
  automatic,
  /// Every device indexes all the points and counts one work item in every G: counts only, on
  /// the row-join engines (lbjoin, gds-join, ted-join, meta-16q, meta-1q, cuda-tensor). Nothing
  /// is computed twice; each device holds the whole index.
  work_items,
  /// One slab of the points a device, with the points within eps of it (A x B: the queries dealt
  /// out); each device holds its slab's share of the index, so the data may exceed one device.
  slabs,
};

/// @brief The split named `text` ("auto", "items" or "slabs", as `--devices-split` takes them);
///        nullopt for any other text.
std::optional<device_split> device_split_named(std::string_view text) noexcept;

class resources {
 public:
  /// @param threads CPU threads engines may use; 0 means every hardware thread.
  /// @param device  CUDA device ordinal GPU engines use.
  explicit resources(unsigned threads = 0, int device = 0);
  ~resources();
  resources(resources&&) noexcept;
  resources& operator=(resources&&) noexcept;
  resources(const resources&) = delete;
  resources& operator=(const resources&) = delete;

  /// @brief Threads engines may use (never 0).
  unsigned threads() const noexcept { return threads_; }
  /// @brief 0 selects every hardware thread.
  void set_threads(unsigned threads) noexcept;
  int device() const noexcept { return device_; }
  /// @brief The CUDA devices a GPU join spreads its work over (`--devices`), `device()` first.
  ///        With more than one, every device runs at once and the result is the one-device
  ///        result; device_split() says how the work is divided (docs/multi-gpu.md).
  const std::vector<int>& devices() const noexcept { return devices_; }
  /// @brief Throws std::invalid_argument for an empty list or a negative ordinal; existence is
  ///        checked when a join first uses a device. A device listed twice runs two shards, each
  ///        with its own streams and buffers (the tests exercise every path so on one GPU).
  void set_devices(std::vector<int> devices);
  /// @brief Whether each join decides for itself between spreading over devices() and running
  ///        on device() alone (`--devices auto`): it spreads a counts-only self-join whose
  ///        modelled time on one device is at least a second, and runs everything else on
  ///        device() (docs/multi-gpu.md). False (the default): every GPU join spreads.
  bool devices_automatic() const noexcept { return devices_automatic_; }
  void set_devices_automatic(bool automatic) noexcept { devices_automatic_ = automatic; }
  /// @brief How a join over several devices divides its work (`--devices-split`).
  device_split split() const noexcept { return split_; }
  void set_device_split(device_split split) noexcept { split_ = split; }
  /// @brief Creates the CUDA context, streams and GPU state now rather than in the first GPU
  ///        join (which would otherwise pay for them). Returns false, doing nothing, when the
  ///        build has no CUDA or no usable device is present.
  bool prepare_gpu();

  /// @brief The memory every join run with these resources plans within.
  const memory_limits& memory() const noexcept { return memory_; }
  void set_memory(const memory_limits& limits) noexcept { memory_ = limits; }

  /// @brief GPU-side state; created lazily by GPU engines (library-internal).
  detail::gpu_state* gpu_state() const noexcept { return gpu_.get(); }
  /// @brief Installs GPU-side state with the deleter that knows its type (library-internal).
  void set_gpu_state(detail::gpu_state* state, void (*deleter)(detail::gpu_state*));
  /// @brief The resources of devices()[k] (k >= 1), created on first use with this object's
  ///        memory limits and kept, like the GPU state, for later joins (library-internal).
  resources& peer(std::size_t k);

 private:
  unsigned threads_ = 1;
  int device_ = 0;
  std::vector<int> devices_{0};
  device_split split_ = device_split::automatic;
  bool devices_automatic_ = false;
  memory_limits memory_;
  std::vector<std::unique_ptr<resources>> peers_;  // [k - 1] for devices_[k]
  std::unique_ptr<detail::gpu_state, void (*)(detail::gpu_state*)> gpu_{nullptr, nullptr};
};

}  // namespace epsjoin
