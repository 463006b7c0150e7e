#pragma once
/// @file sink.hpp
/// @brief Where results go: the `result_sink` interface and the sinks epsjoin provides.
///
/// Engines hand ordered pairs (query, neighbour) to a sink in batches as they find them.
/// Over one join every ordered pair of the result arrives exactly once; for a self-join both
/// (i, j) and (j, i) arrive, and (i, i) only when `join_options::include_self` is set.
/// @code
///   epsjoin::csr_sink table;                       // symmetric CSR in memory
///   epsjoin::self_join(res, points.view(), opt, table);
///   const epsjoin::neighbor_table& t = table.table();
/// @endcode

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin {

namespace detail {
class output_file;
class mapped_output;
class written_output;
template <class Buffer>
class scratch_pool;
}

/// @brief What a sink is about to receive.
struct sink_info {
  std::size_t n_queries = 0;  ///< query ids are in [0, n_queries)
  std::size_t n_data = 0;     ///< neighbour ids are in [0, n_data)
  bool self_join = true;
  bool include_self = false;
  /// The host memory limit the user set (`--memory-limit`), 0 when none: a sink that writes
  /// through memory the kernel manages (a mapped file) keeps the process within it too.
  std::uint64_t host_memory_limit = 0;
  /// The caller's points (queries; data, the same view in a self-join), for a sink that
  /// computes from them (a table's distances where the engine did not write them). Empty where
  /// the sink is not begun by a join.
  dataset_view queries = {};
  dataset_view data = {};
  /// The CUDA device the join runs on (`resources::device()`): where a sink that keeps its
  /// table in device memory puts it when the rows reach it through the host.
  int device = 0;
};

/// @brief Where a row-wise delivery writes: the neighbours of query q go to `row(q)` onwards,
///        `neighbors + starts[q]`. A destination may keep its last rows in a second array
///        instead (rows from `second_from` on start at `second + starts[q]`): a device of a
///        multi-device join writes its own rows into the caller's table and the rows it
///        computes for its halo beside it. Writers go through `row(q)`.
struct row_destination {
  std::uint32_t* neighbors = nullptr;
  const std::uint64_t* starts = nullptr;
  std::uint32_t* second = nullptr;
  std::size_t second_from = SIZE_MAX;
  /// Each neighbour's Euclidean distance, in the slot of `neighbors` it shares an index with
  /// (one array only): set where the engine said it writes them (`count_batch::distances`).
  double* distances = nullptr;

  std::uint32_t* row(std::size_t q) const noexcept {
    return (q < second_from ? neighbors : second) + starts[q];
  }
  /// The distance slot of the neighbour slot `at` (of `neighbors`).
  double* distance_at(const std::uint32_t* at) const noexcept {
    return distances + (at - neighbors);
  }
  /// The same rows, each `by` ids further on (by = 1 skips a slot before every row).
  row_destination shifted(std::ptrdiff_t by) const noexcept {
    return {neighbors + by, starts, second == nullptr ? nullptr : second + by, second_from,
            distances == nullptr ? nullptr : distances + by};
  }
  /// True when every row lies in `neighbors`.
  bool one_array() const noexcept { return second_from == SIZE_MAX; }
};

/// @brief The shape of result a sink wants.
enum class result_form {
  pairs,         ///< every ordered pair (i, j), in batches (`consume`)
  unique_pairs,  ///< a self-join's unordered pairs once each (`consume_rows` or `consume`)
  counts,        ///< each query's number of neighbours (`consume_counts`)
  total,         ///< only the number of pairs (`consume_counts`, its total or its counts)
  table,         ///< whole rows: a CSR neighbour table (rows, row blocks, a device table, pairs)
};

/// @brief What a sink takes and what it keeps, declared once (`result_sink::request`): the
///        engines and dispatch read it to choose how results reach the sink.
struct sink_request {
  result_form form = result_form::pairs;
  /// total: the queries counted are those below this id (a shard of a larger join drops the
  /// rest). An engine that counts on a device may then sum there and hand over the sum alone.
  std::size_t total_below = SIZE_MAX;
  /// table: the sink lays out rows that the engine writes in place (`row_delivery::in_place`):
  /// the fast path into a CSR table, where no pair is ever materialised.
  bool rows_in_place = false;
  /// table: the sink takes blocks of complete rows in query order (`row_delivery::blocks`).
  /// Engines that lay their rows out in query order (the GPU engines, when the table fits in
  /// device memory) then stream it with bounded host memory.
  bool row_blocks = false;
  /// table, with row_blocks: blocks may also come in any query order and from several threads
  /// at once, each carrying its place in the whole table (a file written with `pwrite` at each
  /// block's offset). Several devices then write their own runs of the table at once.
  bool row_blocks_any_order = false;
  /// table: the sink wants the whole table in device memory (a `row_segment` on the device).
  /// Engines that cannot leave it there deliver the table through the host as for any table
  /// sink, and the sink uploads it as it finishes (`device_csr_sink` does, to
  /// `sink_info::device`); the join's stats count that upload.
  bool device_table = false;
  /// True when the sink keeps the whole result in host memory (a table or a pair list), so a
  /// result larger than the memory limit is refused before anything is allocated.
  bool keeps_result_in_memory = false;
  /// Host bytes the sink keeps per pair it receives through `consume` (after `begin`): pairs
  /// beyond the memory limit stop the join with a clear error, not the machine.
  double bytes_kept_per_pair = 0;
  /// Host bytes the sink's caller adds per pair once the join returns (a graph's float64 data
  /// array, pairs cut from the table): a result kept in memory is checked with them against
  /// the memory limit, so one that could not be completed is refused before any of it is made.
  double bytes_added_per_pair = 0;
  /// table: each neighbour's Euclidean distance (float64) too, beside its id. Engines that
  /// have it at hand write it with the row (`count_batch::distances`); for the others the sink
  /// computes it from the points (`sink_info`) once the rows are complete. Euclidean joins of
  /// points in host memory without a periodic box only.
  bool distances = false;

  /// True when only neighbour counts are wanted: engines that count without materialising
  /// pairs then call `consume_counts` instead of `consume`.
  bool counts_only() const noexcept {
    return form == result_form::counts || form == result_form::total;
  }
  /// For the total form, the id below which queries are counted; otherwise std::nullopt.
  std::optional<std::size_t> total_only_below() const noexcept {
    return form == result_form::total ? std::optional<std::size_t>(total_below) : std::nullopt;
  }
  /// True when, in a self-join, each unordered pair is kept once: an engine that finds each pair
  /// once may hand it over once (`row_segment::unordered`); one that cannot still uses `consume`
  /// (the sink keeps one orientation), or rows when the sink also takes them.
  /// Ignored in A x B joins.
  bool unordered_pairs() const noexcept { return form == result_form::unique_pairs; }
};

/// @brief How a table's rows follow the counts an engine handed over (`count_batch::rows`).
enum class row_delivery {
  none,      ///< no rows follow: the counts are the result (counts and total forms)
  in_place,  ///< the engine writes every row at the destination `consume_counts` returns
  blocks,    ///< blocks of complete rows in query order follow (`sink_request::row_blocks`)
};

/// @brief Neighbour counts, as an engine hands them over (`result_sink::consume_counts`).
struct count_batch {
  /// queries[k] has counts[k] more neighbours (ids may repeat; counts add up). Empty, with
  /// `rows` set: counts[q] is query q's number of neighbours, for every query, handed over once.
  std::span<const std::uint32_t> queries = {};
  std::span<const std::uint32_t> counts = {};
  /// Total form: more ordered pairs of the queries below `sink_request::total_below`, summed
  /// where they were counted (on a device) instead of query by query.
  std::uint64_t total = 0;
  /// Table form: how the rows of these counts follow.
  row_delivery rows = row_delivery::none;
  /// in_place, for a sink that wants distances: the engine writes each neighbour's distance at
  /// the destination's `distances` too (otherwise the sink computes them after the rows).
  bool distances = false;
};

/// @brief Rows of neighbours, as an engine hands them over (`result_sink::consume_rows`).
///
/// Row r belongs to query first_query + r, or to queries[r] when `queries` is given. Its
/// neighbours are neighbors[offsets[r] - offsets[0] .. offsets[r + 1] - offsets[0]), offsets
/// being positions in the whole table; without `offsets` each row holds one neighbour (a batch
/// of pairs, queries[r] and neighbors[r]). The spans are valid only during the call, unless
/// `owner` keeps them.
struct row_segment {
  std::size_t first_query = 0;
  std::span<const std::uint32_t> queries = {};
  std::span<const std::uint64_t> offsets = {};
  std::span<const std::uint32_t> neighbors = {};
  /// Self-join, unique-pairs form: each (q, n), q < n, stands for (n, q) as well. Self pairs
  /// (q, q) never come this way.
  bool unordered = false;
  /// Where the spans lie; device memory is that of CUDA device `device`.
  memory_space space = memory_space::host;
  int device = 0;
  /// Owns device arrays that a sink may keep past the call (the whole table, for a sink whose
  /// request names `device_table`).
  std::shared_ptr<void> owner = {};

  /// The number of rows.
  std::size_t size() const noexcept {
    return queries.empty() ? (offsets.empty() ? 0 : offsets.size() - 1) : queries.size();
  }
};

/// @brief Receives a join's result batch by batch.
///
/// A sink says once what it takes (`request`); the engines deliver only in the forms it names:
/// - pairs (`consume`), which any sink takes;
/// - counts (`consume_counts`): the result of the counts and total forms, or, for a table, every
///   query's count once, before its rows;
/// - rows (`consume_rows`): unordered pairs of the unique-pairs form, blocks of complete rows in
///   query order, or the whole table in device memory.
/// `consume`, `consume_counts` (but for a table's counts) and `consume_rows` (but for blocks,
/// which come from one thread unless the sink takes them in any order) may be called
/// concurrently from several threads between `begin` and `finish`; implementations synchronise
/// themselves.
class result_sink {
 public:
  virtual ~result_sink() = default;
  /// @brief What the sink takes and keeps; the same for the whole join (read after `begin`).
  virtual sink_request request() const { return {}; }
  /// @brief Called once, before any batch.
  virtual void begin(const sink_info& info) { (void)info; }
  /// @brief A batch of ordered pairs; the span is only valid during the call.
  virtual void consume(std::span<const index_pair> pairs) = 0;
  /// @brief Neighbour counts. With `rows` set (table form; called at most once, and then
  ///        instead of `consume`), counts[q] is the number of neighbours query q will get, and
  ///        for `row_delivery::in_place` the engine then writes every row completely at the
  ///        returned destination (rows concurrently, in any order) before `finish`; otherwise the
  ///        destination is empty.
  virtual row_destination consume_counts(const count_batch& counts);
  /// @brief Rows: see `row_segment`. Blocks come in increasing query order, each starting where
  ///        the last ended (any order, from several threads, where the sink's request says
  ///        `row_blocks_any_order`), and together cover every query (rows may be empty); a
  ///        table in device memory comes whole, once, instead of any other delivery (self pairs
  ///        in it when asked for).
  virtual void consume_rows(const row_segment& rows);
  /// @brief Called once, after the last batch.
  virtual void finish() {}
};

/// @brief Builds the CSR `neighbor_table` in memory.
class csr_sink final : public result_sink {
 public:
  /// @param sort_neighbors sort each row by neighbour id (otherwise row order is unspecified)
  /// @param bytes_added_per_pair what the caller makes of the table after the join, per pair
  ///        (`sink_request::bytes_added_per_pair`: a graph's data array, pairs cut from it)
  /// @param with_distances keep each neighbour's Euclidean distance too (`table().distances`),
  ///        written by the engines that have it at hand, computed from the points otherwise
  explicit csr_sink(bool sort_neighbors = false, double bytes_added_per_pair = 0,
                    bool with_distances = false)
      : sort_neighbors_(sort_neighbors),
        with_distances_(with_distances),
        added_per_pair_(bytes_added_per_pair) {}
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override;
  /// Pairs are kept 8 bytes a pair while collected, 4 in the table they are sorted into, and 8
  /// more for a distance.
  sink_request request() const override {
    return {.form = result_form::table, .rows_in_place = true, .keeps_result_in_memory = true,
            .bytes_kept_per_pair = 12, .bytes_added_per_pair = added_per_pair_ +
                                                                (with_distances_ ? 8 : 0),
            .distances = with_distances_};
  }
  row_destination consume_counts(const count_batch& counts) override;
  void finish() override;
  const neighbor_table& table() const noexcept { return table_; }
  neighbor_table release() noexcept { return std::move(table_); }

 private:
  void sort_rows();
  void compute_distances();
  bool sort_neighbors_;
  bool with_distances_;
  double added_per_pair_ = 0;
  bool rows_delivered_ = false;
  bool distances_written_ = false;
  dataset_view queries_, data_;
  std::size_t n_queries_ = 0;
  std::mutex mutex_;
  std::vector<std::vector<index_pair>> batches_;
  neighbor_table table_;
};

/// @brief Leaves the CSR table in the memory of the resources' CUDA device (`table()`). The
///        row-filling GPU engines (lbjoin, gds-join, ted-join, meta-16q, meta-1q) hand over the
///        table they laid out on the device, with no copy through the host; engines that deliver
///        through the host (gpu-sj, brute-gpu, or a table too large to lay out on the device)
///        fill a host table that the join then uploads (`join_stats::h2d_result_bytes`), as do
///        the CPU engines and hegjoin (from host points). A CUDA-less build refuses the sink
///        with `unavailable`. The table is complete when the join returns.
class device_csr_sink final : public result_sink {
 public:
  explicit device_csr_sink(bool sort_neighbors = false)
      : host_(sort_neighbors), sort_(sort_neighbors) {}
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override { host_.consume(pairs); }
  sink_request request() const override {
    sink_request wanted = host_.request();
    wanted.device_table = true;
    return wanted;
  }
  row_destination consume_counts(const count_batch& counts) override {
    return host_.consume_counts(counts);
  }
  void consume_rows(const row_segment& rows) override;
  /// Uploads the rows that reached it through the host, if the table did not come whole.
  void finish() override;
  /// @brief True once the table is on the device (after the join).
  bool has_table() const noexcept { return table_.owner != nullptr; }
  const device_csr& table() const noexcept { return table_; }
  /// @brief Whether rows are to be sorted by id (the uploaded table is; a device table is
  ///        sorted by the caller, for instance with CuPy's `sort_indices`).
  bool sorts_neighbors() const noexcept { return sort_; }

 private:
  csr_sink host_;
  bool sort_ = false;
  std::size_t n_queries_ = 0;
  int device_ = 0;
  device_csr table_;
};

/// @brief Hands the CSR table to a callback as blocks of complete rows, in increasing query
///        order (see `result_sink::consume_rows`), each row sorted by id when asked. Engines
///        that fill the table in query order stream it through in blocks of at most 64 MiB of
///        ids; for the others the table is built in memory first (as `csr_sink` builds it, under
///        the same memory limit) and handed over in such blocks at `finish`.
class row_block_sink final : public result_sink {
 public:
  using callback = std::function<void(std::size_t first_query, std::span<const std::uint64_t> offsets,
                                      std::span<const std::uint32_t> neighbors)>;
  explicit row_block_sink(callback on_block, bool sort_neighbors = false);
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override { collected_.consume(pairs); }
  /// Keeps the rows and pairs it may have to collect in memory; blocks pass straight through.
  sink_request request() const override {
    sink_request wanted = collected_.request();
    wanted.row_blocks = true;
    return wanted;
  }
  row_destination consume_counts(const count_batch& counts) override;
  void consume_rows(const row_segment& rows) override;
  void finish() override;

 private:
  callback on_block_;
  bool sort_neighbors_;
  bool streamed_ = false;
  std::size_t n_queries_ = 0, next_query_ = 0;
  std::vector<std::uint32_t> sorted_;
  csr_sink collected_;
};

/// @brief Keeps each unordered pair once, as (i, j) with i < j (self-join; plus (i, i) when
///        self pairs were asked for), or every (a, b) pair (A x B join). Sorted at `finish`.
class unique_pairs_sink final : public result_sink {
 public:
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override;
  /// A self-join keeps one pair of each two it receives.
  sink_request request() const override {
    return {.form = result_form::unique_pairs, .keeps_result_in_memory = true,
            .bytes_kept_per_pair = keep_all_ ? 8.0 : 4.0};
  }
  void consume_rows(const row_segment& rows) override;
  void finish() override;
  const std::vector<index_pair>& pairs() const noexcept { return pairs_; }

 private:
  bool keep_all_ = false;
  bool keep_self_ = false;
  std::mutex mutex_;
  std::vector<index_pair> pairs_;
};

/// @brief Counts only: the total, and optionally each query's number of neighbours.
class count_sink final : public result_sink {
 public:
  explicit count_sink(bool per_point = false) : per_point_(per_point) {}
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override;
  /// Without per-point counts, the total of every query is all this sink keeps.
  sink_request request() const override {
    return {.form = per_point_ ? result_form::counts : result_form::total};
  }
  row_destination consume_counts(const count_batch& counts) override;
  void finish() override;
  /// @brief Ordered pairs received (self pairs included when asked for).
  std::uint64_t total() const noexcept { return total_.load(); }
  /// @brief [n_queries] per-query neighbour counts; empty unless constructed with per_point.
  const std::vector<std::uint64_t>& per_point() const noexcept { return counts_; }

 private:
  bool per_point_;
  std::atomic<std::uint64_t> total_{0};
  std::vector<std::uint64_t> counts_;
};

/// @brief Forwards every batch to a callback (called under a lock, one batch at a time).
class callback_sink final : public result_sink {
 public:
  explicit callback_sink(std::function<void(std::span<const index_pair>)> callback)
      : callback_(std::move(callback)) {}
  void consume(std::span<const index_pair> pairs) override;

 private:
  std::mutex mutex_;
  std::function<void(std::span<const index_pair>)> callback_;
};

/// @brief Writes the CSR neighbour table (binary, docs/formats.md) to a file. An engine that
///        delivers rows writes them straight into the file through a shared mapping of it, so
///        the table need not fit in the process's memory (the kernel writes the pages back);
///        its space is reserved first, so a full disk fails then, with its reason. Pairs from
///        other engines are collected and written at finish(). Like every writer, the file
///        appears under `path` only once complete. A stream target (check_output_path: standard
///        output, a device, a FIFO) is written in file order in place: row blocks pass
///        straight through, rows and pairs are collected in memory (under the memory limit)
///        and written at finish().
class csr_file_sink final : public result_sink {
 public:
  /// @param sort_neighbors sort each row by neighbour id
  explicit csr_file_sink(std::string path, bool sort_neighbors = false);
  ~csr_file_sink() override;
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override;
  /// Blocks are written with plain writes at their place in the file (a large one in pieces by
  /// several threads), in any order and from several devices at once: memory stays bounded by
  /// the blocks in flight. Pairs delivered as pairs are collected in memory first, and so is a
  /// stream's table (a stream takes blocks in query order only).
  sink_request request() const override {
    return {.form = result_form::table, .rows_in_place = true, .row_blocks = true,
            .row_blocks_any_order = !in_place_,
            .keeps_result_in_memory = in_place_,
            .bytes_kept_per_pair = collected_.request().bytes_kept_per_pair};
  }
  row_destination consume_counts(const count_batch& counts) override;
  void consume_rows(const row_segment& rows) override;
  void finish() override;

 private:
  row_destination begin_rows(std::span<const std::uint32_t> counts);
  void begin_row_blocks(std::span<const std::uint32_t> counts);
  std::string path_;
  bool in_place_ = false;  ///< a stream target: written in order, never mapped
  bool sort_neighbors_;
  csr_sink collected_;
  std::unique_ptr<detail::mapped_output> file_;
  std::unique_ptr<detail::written_output> stream_;
  std::uint64_t neighbors_at_ = 0;  ///< file position of the first neighbour (row blocks)
  /// Each block's sorted copy, borrowed per call: blocks may come from several devices at once.
  std::unique_ptr<detail::scratch_pool<std::vector<std::uint32_t>>> sorted_;
  std::size_t n_queries_ = 0;
  std::uint64_t host_limit_ = 0;  ///< sink_info::host_memory_limit, which a mapping keeps within
  bool rows_ = false;
  std::uint64_t* offsets_ = nullptr;
  std::uint32_t* neighbors_ = nullptr;
};

/// @brief Layouts a pair stream can be written in.
enum class pair_file_format {
  npy,  ///< NumPy .npy, shape (n_pairs, 2), dtype <u4
  csv,  ///< text, one "i,j" line per pair
};

/// @brief Streams pairs to a file as they arrive, so the result may exceed memory.
///        A self-join writes each unordered pair once (i < j, and (i, i) when self pairs were
///        asked for) unless `ordered` is set. The file is created at construction (a bad path
///        fails before any join) under a temporary name beside `path`, and renamed to `path`
///        only by a successful finish(): a failed or interrupted join leaves no file at `path`.
class pair_file_sink final : public result_sink {
 public:
  pair_file_sink(std::string path, pair_file_format format, bool ordered = false);
  ~pair_file_sink() override;
  void begin(const sink_info& info) override;
  void consume(std::span<const index_pair> pairs) override;
  sink_request request() const override {
    return {.form = ordered_ ? result_form::pairs : result_form::unique_pairs};
  }
  void consume_rows(const row_segment& rows) override;
  void finish() override;
  std::uint64_t written() const noexcept { return written_; }

 private:
  void write_header(std::uint64_t rows);
  void write_kept(std::span<const index_pair> pairs);
  std::string path_;
  pair_file_format format_;
  bool ordered_;
  bool self_join_ = true;
  bool keep_self_ = false;
  std::unique_ptr<detail::output_file> file_;
  std::mutex mutex_;
  std::vector<index_pair> scratch_;
  std::string text_;
  std::uint64_t written_ = 0;
};

}  // namespace epsjoin
