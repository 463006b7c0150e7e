#pragma once
// split_join: hegjoin's split of one join between the GPU and the CPU (dissertation sec. 4.4): the work items
// in non-increasing workload order go through a work deque; the GPU (the row-join pipeline's
// thread) takes batches from the heavy front, CPU workers chunks from the light back. Under the
// static strategies each side gets a fixed part up front (the GPU the heaviest prefix) and takes
// only from its own part. Either way the GPU's items are a prefix of the order, which is what lets
// the pipeline fill the GPU's rows and leave the rest to this class.

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/timer.hpp"
#include "epsjoin/sink.hpp"
#include "epsjoin/stats.hpp"
#include "hetero/cpu_ego.hpp"
#include "hetero/cpu_rows.hpp"
#include "hetero/work_deque.hpp"

namespace epsjoin::detail::hetero {

enum class partition_strategy { dynamic, static_queries, static_candidates };

/// How the CPU joins its items: against the host copy of the GPU's grid index (cpu_rows.hpp),
/// or against an EGO index of its own (cpu_ego.hpp; full rows only).
enum class cpu_engine_kind { grid, super_ego };

/// How the CPU's reverse hits (halving) reach their rows: straight, or grouped by row first;
/// automatic: straight when they are fewer than the rows.
enum class reverse_delivery { automatic, direct, grouped };

struct share_settings {
  partition_strategy strategy = partition_strategy::dynamic;
  /// Static strategies: the GPU's fraction of the queries or candidates.
  double gpu_fraction = 1;
  /// Queries per CPU chunk (n_p^CPU), converted to items at the join's mean queries per item.
  std::uint32_t cpu_chunk_queries = 1024;
  /// CPU workers; 0 leaves everything to the GPU.
  unsigned cpu_threads = 1;
  /// Batches the GPU's work is cut into at least (never fewer than sec. 4.4.3's rule).
  unsigned gpu_batches = 8;
  /// Fewest items in a GPU batch: a batch of fewer warps than the device holds several times
  /// over runs at low occupancy (Expo4D 2M: batches of 2,048 items took the counting pass from
  /// 4 ms to 48 ms).
  std::uint32_t min_batch_items = 1u << 15;
  cpu_engine_kind cpu_engine = cpu_engine_kind::grid;
  ego_settings ego;  ///< cpu_engine super_ego
  reverse_delivery delivery = reverse_delivery::automatic;
  /// Dynamic: a CPU worker stops taking chunks once it expects to finish its next one after the
  /// GPU would finish everything left (its rate from its last batches reported to gpu_progress,
  /// the worker's from its last chunk); the GPU then takes the rest.
  bool cpu_yields = true;
  std::string summary;  ///< how the fraction was chosen, for the notes
};

/// What one side did.
struct side_totals {
  std::uint64_t queries = 0, items = 0, candidates = 0, batches = 0;
  double seconds = 0;  ///< from the start of the counting phase to the side's last item
};

/// Copies the candidate ranges of items [lo, hi) from the device: `counts[i - lo]` ranges for item
/// i, concatenated in item order into `ranges`.
using range_fetcher =
    std::function<void(std::uint32_t lo, std::uint32_t hi, std::vector<host_range>& ranges,
                       std::vector<std::uint32_t>& counts)>;

template <class T>
class split_join {
 public:
  explicit split_join(share_settings settings);
  ~split_join();
  split_join(const split_join&) = delete;
  split_join& operator=(const split_join&) = delete;

  /// Splits `items` (workload order) whose distances are `candidates` for a GPU that keeps
  /// `gpu_streams` batches in flight, and starts the clock.
  void plan(std::span<const host_item> items, std::span<const std::uint64_t> candidates,
            unsigned gpu_streams);
  /// Dynamic partitioning before the items are on the host, so the GPU can start at once: its
  /// batches are cut by item count (a fixed n_p^GPU, as the dissertation's GPU batches are),
  /// heaviest first. `n_queries` and `candidates` are the join's totals. workload() must come
  /// before start().
  void plan_dynamic(std::uint32_t n_items, std::uint64_t n_queries, std::uint64_t candidates,
                    unsigned gpu_streams);
  /// After plan_dynamic: the items (workload order) and their candidates, now on the host.
  void workload(std::span<const host_item> items, std::span<const std::uint64_t> candidates);
  /// Starts the CPU workers on `view` (items and points; the grid side's ranges come from
  /// `fetch`, as the CPU's end of the deque reaches them). The view and `fetch` must outlive
  /// wait(). Never called when the GPU emptied the deque first: the CPU then has no rows. The
  /// super-ego side first builds its EGO index here, and starts no workers when the GPU has
  /// emptied the deque meanwhile.
  void start(const host_join_view<T>& view, range_fetcher fetch);
  /// The GPU's next batch of item indices; empty once its part is done.
  item_range next_gpu_batch();
  /// Whether any of the CPU's items are still in the deque (a snapshot; false once the GPU has
  /// taken them all under dynamic partitioning).
  bool cpu_work_left() const;
  /// The GPU has completed items [0, items_done): what the CPU workers judge its rate by.
  void gpu_progress(std::uint32_t items_done);
  /// The GPU's last batch has completed.
  void gpu_finished();
  /// Joins the workers (rethrowing the first error of any).
  void wait();
  /// After a failure elsewhere: hands the workers nothing more and joins them.
  void stop() noexcept;

  /// Whether the CPU found any pair (after wait()); if not, it has nothing to add to any row.
  bool found_any() const;
  /// Items [0, gpu_items()) were the GPU's (after wait()).
  std::uint32_t gpu_items() const { return gpu_items_; }
  /// Neighbours the CPU found per query position: its rows, and under halving also the reverse
  /// hits it found for other rows (the GPU's included).
  std::vector<std::uint32_t> counts_by_position(std::uint32_t positions) const;
  /// Writes the CPU's part of every row to a row sink's table (dest.starts by caller's id), after
  /// the GPU's part: row p's first `gpu_counts[p]` places are the GPU's (empty span: none). Once,
  /// after counts_by_position: under halving it uses the reverse counts up as cursors.
  void deliver_rows(const row_destination& dest, std::span<const std::uint32_t> gpu_counts,
                    unsigned threads);
  /// The CPU's pairs (both directions under halving) to a pair sink.
  void deliver_pairs(result_sink& sink) const;
  /// The shares, finishing times, load imbalance and throughputs, as notes.
  void report(join_stats& stats) const;

  const side_totals& gpu() const { return gpu_; }
  bool dynamic() const { return s_.strategy == partition_strategy::dynamic; }
  /// Whether the CPU side has any workers at all (cpu_threads > 0).
  bool has_workers() const { return s_.cpu_threads > 0; }
  /// Whether start() ran: the workers were started.
  bool started() const { return started_; }
  side_totals cpu() const;

 private:
  void work(unsigned worker);
  /// Whether a worker whose last chunk of `items` items and `candidates` candidates took
  /// `seconds` should leave the next chunk, `next`, to the GPU (cpu_yields).
  bool leave_to_gpu(const item_range& next, std::uint32_t items, std::uint64_t candidates,
                    double seconds) const;
  /// What both plans set: the item count, the CPU's chunk size, an empty window, the clock.
  void begin_plan(std::uint32_t n_items, std::uint64_t n_queries, bool by_item_count);
  /// The prefix sums of the items' candidates and queries.
  void set_prefixes(std::span<const host_item> items, std::span<const std::uint64_t> candidates);
  /// Makes the ranges of items [first, n) available to the workers.
  void reach(std::uint32_t first);

  share_settings s_;
  host_join_view<T> view_;
  std::vector<std::uint64_t> candidates_prefix_;       ///< [items + 1]
  std::vector<std::uint64_t> queries_prefix_;          ///< [items + 1]
  std::unique_ptr<work_deque> gpu_deque_, cpu_deque_;  ///< one object when dynamic
  std::uint32_t cpu_offset_ = 0;                       ///< item index of the CPU deque's item 0
  std::uint32_t chunk_items_ = 1;
  std::uint64_t batch_candidates_ = 0, batch_queries_ = 0;
  // plan_dynamic: GPU batches of batch_items_ items; the prefixes come later (workload()).
  bool by_item_count_ = false;
  std::uint32_t batch_items_ = 0;
  std::uint64_t total_queries_ = 0, total_candidates_ = 0;
  std::uint32_t gpu_items_ = 0;
  std::uint32_t n_items_ = 0;  ///< read by the GPU's thread while start() sets view_
  bool started_ = false;
  // The CPU's window: items [window_, n) have their ranges on the host.
  range_fetcher fetch_;
  std::mutex fetch_mutex_;
  std::atomic<std::uint32_t> window_{0};
  std::deque<std::vector<host_range>> range_blocks_;
  std::vector<const host_range*> item_ranges_;
  std::vector<std::uint32_t> item_range_count_;
  stopwatch clock_;
  side_totals gpu_;
  std::unique_ptr<ego_side<T>> ego_;           ///< cpu_engine super_ego, once built
  std::vector<cpu_rows> rows_;                 ///< per worker
  std::vector<std::uint32_t> reverse_counts_;  ///< halving: per position, atomically
  bool delivered_ = false;                     ///< deliver_rows ran
  /// The GPU's last two reports: items [0, done) completed by `at` seconds on clock_.
  struct gpu_mark {
    std::uint32_t done = 0;
    double at = 0;
  };
  mutable std::mutex progress_mutex_;
  gpu_mark gpu_last_, gpu_before_;
  std::atomic<unsigned> yielded_{0};           ///< workers that left the rest to the GPU
  std::vector<double> worker_end_;             ///< per worker, seconds on clock_
  std::vector<std::thread> workers_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace epsjoin::detail::hetero
