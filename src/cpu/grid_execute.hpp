#pragma once
// cpu-grid's task loop: one task = some queries of one query cell against the candidate ranges
// of the cells it examines. Instantiated per point layout, precision, join kind, output and SIMD
// width.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "base/cancellation.hpp"
#include "core/emitter.hpp"
#include "core/row_cursors.hpp"
#include "core/row_scatter.hpp"
#include "cpu/grid_kernels.hpp"
#include "cpu/grid_points.hpp"
#include "cpu/grid_schedule.hpp"

namespace epsjoin::detail::cpu {

/// Everything a task reads. For a self-join the query and data members refer to the same objects.
template <class T>
struct join_inputs {
  const grid::host_index* queries;
  const grid::host_index* data;
  dataset_view query_input, data_input;  // the caller's points, for float64 re-checks
  const grid_schedule* schedule;
  const plan_settings* settings;
  thresholds<T> limit;
  double eps2;
  bool skip_self;  // one-sided self-join (pattern full): never pair a point with itself
  bool avx2;       // run the 32-byte kernels (the CPU has AVX2 and FMA)
  /// Gather a task's candidates into one buffer when it has at least this many ranges and two
  /// queries (column layout only); 0 never.
  unsigned gather_min_spans;
  /// Count mode: neighbours per query position (atomic adds when both sides are counted).
  std::uint32_t* counts;
  /// Rows with distances: the column of each input dimension (the inverse of the plan's
  /// dim_order), so a distance is summed in the input's order.
  const int* column_of_dim = nullptr;
};

template <class T>
struct worker_state {
  std::optional<detail::pair_emitter> emitter;
  /// The emitter takes unordered pairs (a halved self-join into a unique-pairs sink): each pair
  /// is emitted once, as (min, max).
  bool unordered = false;
  /// Rows written in place instead of pairs emitted: the fill pass of a row sink under the FULL
  /// pattern, where the task of a query owns its whole row. Null: pairs through the emitter.
  detail::row_scatter_sink* rows = nullptr;
  /// Rows written in place by a halved self-join (both sides of each pair); null otherwise.
  const detail::row_cursors* shared = nullptr;
  std::vector<std::uint32_t> forward;  // one query's own hits, claimed in one run
  // A task's other sides of its pairs, (candidate slot, query id) in query order, written after
  // the task with one claim per candidate: a row a random place in the table is then missed
  // once a task, not once a pair.
  std::vector<std::uint32_t> back_slot, back_id, back_count;
  std::vector<std::uint32_t*> back_at;
  std::vector<point_range> scratch, spans;
  std::vector<std::uint32_t> slice;
  std::vector<kernels::lane_count<T>> local_counts;  // candidate-side counts of one task
  std::vector<T> gathered;                           // a task's candidates, by column
  std::vector<std::uint32_t> gathered_ids;
  /// Count mode of a halved join: this thread's own array of counts by position, added up after
  /// the run (no atomics); null: atomic adds into join_inputs::counts.
  std::uint32_t* private_counts = nullptr;
  std::uint64_t rechecks = 0;
  std::uint64_t gathered_tasks = 0;
};

inline void atomic_add(std::uint32_t& target, std::uint32_t value) {
  std::atomic_ref<std::uint32_t>(target).fetch_add(value, std::memory_order_relaxed);
}

template <class T>
inline void add_count(const join_inputs<T>& in, worker_state<T>& w, std::uint32_t position,
                      std::uint32_t value) {
  if (w.private_counts != nullptr) {
    w.private_counts[position] += value;
  } else {
    atomic_add(in.counts[position], value);
  }
}

template <class Set>
inline constexpr bool is_column_set = false;
template <class T, int D, distance_metric M>
inline constexpr bool is_column_set<kernels::column_set<T, D, M>> = true;

/// Halved: a self-join under unicomp / lid_unicomp (each unordered pair computed once, both
/// directions delivered); otherwise one-sided (A x B, or a self-join under full). Bytes: SIMD
/// width, 16 (baseline) or 32 (compiled for x86-64-v3; run only where isa::cpu_has_v3()).
template <class T, class Set, bool Halved, bool Counts, int Bytes>
class grid_executor {
 public:
  // Candidates between the thresholds are decided as the oracle decides them: float32's band
  // is its rounding, float64's the kernels' order of summing (float_band.hpp).
  static constexpr bool recheck = true;
  using count_t = kernels::lane_count<T>;
  using worker = worker_state<T>;

  grid_executor(const join_inputs<T>& in, Set queries, Set data)
      : in_(in), q_(queries), c_(data) {}

  void run(const grid_task& t, worker& w) const {
    if constexpr (Bytes == 32) {
      run_avx2(t, w);
    } else {
      run_task(t, w);
    }
  }

 private:
  // Queries between cancellation points: a query's candidates take microseconds, its row's first
  // write into a fresh table a huge page's zeroing (milliseconds on a busy machine).
  static constexpr std::uint32_t cancel_every = 8;

  // Candidates as one query loop sees them: a point set, its input ids, and ranges of it. With
  // `Halved` the first range starts with the query's own cell at own_begin.
  struct candidates {
    const Set& set;
    const std::uint32_t* ids;
    std::span<const point_range> spans;
    std::uint32_t own_begin;
  };

  // The v3 copy of the whole task loop: `flatten` inlines the kernels (and all else) into it.
  EPSJOIN_ISA_V3 __attribute__((flatten)) void run_avx2(const grid_task& t, worker& w) const {
    run_task(t, w);
  }

  void run_task(const grid_task& t, worker& w) const {
    const grid::host_index& qi = *in_.queries;
    const grid::host_index& di = *in_.data;
    const auto ranges = in_.schedule->ranges(t.cell, qi, di, *in_.settings, w.scratch);
    w.spans.clear();
    std::size_t first = 0;
    const std::uint32_t own_begin = qi.cell_begin[t.cell];
    if constexpr (Halved) {
      // The own cell, pairs (q, c > q) only; joined to the next range when it follows directly.
      point_range own{own_begin, qi.cell_begin[t.cell + 1]};
      if (!ranges.empty() && ranges[0].begin == own.end) {
        own.end = ranges[0].end;
        first = 1;
      }
      w.spans.push_back(own);
    }
    w.spans.insert(w.spans.end(), ranges.begin() + static_cast<std::ptrdiff_t>(first),
                   ranges.end());
    std::uint32_t total = 0;
    w.slice.clear();
    for (const point_range& r : w.spans) {
      w.slice.push_back(total);
      total += r.end - r.begin;
    }
    if constexpr (Counts && Halved) w.local_counts.assign(total + kernels::counter_pad, 0);
    if constexpr (!Counts && Halved) {
      if (w.shared != nullptr) {
        if (w.forward.size() < total) w.forward.resize(total);
        w.back_slot.clear();
        w.back_id.clear();
        w.back_count.assign(total, 0);
      }
    }

    bool gathered = false;
    if constexpr (is_column_set<Set>) {
      if (in_.gather_min_spans > 0 && w.spans.size() >= in_.gather_min_spans &&
          t.q_end - t.q_begin >= 2) {
        // Many short ranges: copy them into one buffer so each query runs one long loop.
        gathered = true;
        ++w.gathered_tasks;
        Set g = gather(w, total);
        const point_range all{0, total};
        const candidates cand{g, w.gathered_ids.data(), {&all, 1}, 0};
        for (std::uint32_t q = t.q_begin; q < t.q_end; ++q) {
          if (q % cancel_every == 0) cancellation_point();
          query(q, own_begin, cand, w);
        }
      }
    }
    if (!gathered) {
      const candidates cand{c_, di.permutation.data(), w.spans, own_begin};
      for (std::uint32_t q = t.q_begin; q < t.q_end; ++q) {
        if (q % cancel_every == 0) cancellation_point();
        query(q, own_begin, cand, w);
      }
    }

    if constexpr (!Counts && Halved) {
      if (w.shared != nullptr) write_back(w);
    }
    if constexpr (Counts && Halved) {
      for (std::size_t k = 0; k < w.spans.size(); ++k) {
        const count_t* local = w.local_counts.data() + w.slice[k];
        for (std::uint32_t p = w.spans[k].begin; p < w.spans[k].end; ++p) {
          if (const count_t n = local[p - w.spans[k].begin]) {
            add_count(in_, w, p, static_cast<std::uint32_t>(n));
          }
        }
      }
    }
  }

  // A halved fill's other sides, after the task: each candidate's run claimed once, then the
  // query ids written in the order they were found.
  void write_back(worker& w) const {
    w.back_at.resize(w.back_count.size());
    for (std::size_t k = 0; k < w.spans.size(); ++k) {
      const point_range r = w.spans[k];
      for (std::uint32_t p = r.begin; p < r.end; ++p) {
        const std::uint32_t slot = w.slice[k] + (p - r.begin);
        if (const std::uint32_t n = w.back_count[slot]) w.back_at[slot] = w.shared->claim(p, n);
      }
    }
    for (std::size_t e = 0; e < w.back_slot.size(); ++e) *w.back_at[w.back_slot[e]]++ = w.back_id[e];
  }

  // Copies the task's ranges, in order, into the worker's buffer (padded columns).
  Set gather(worker& w, std::uint32_t total) const {
    constexpr int d = sizeof(Set::col) / sizeof(Set::col[0]);
    const std::size_t stride = total + column_pad;
    w.gathered.resize(stride * d + column_pad);
    w.gathered_ids.resize(total);
    Set g;
    for (int j = 0; j < d; ++j) g.col[j] = w.gathered.data() + static_cast<std::size_t>(j) * stride;
    const std::uint32_t* ids = in_.data->permutation.data();
    // Whole 32-byte chunks, no memcpy call per short range: a column's last chunk may run into
    // the next range's slot (written next) or the padding, and read the source's padding.
    constexpr std::size_t per_chunk = 32 / sizeof(T);
    static_assert(per_chunk <= column_pad);
    for (std::size_t k = 0; k < w.spans.size(); ++k) {
      const point_range r = w.spans[k];
      const std::size_t len = r.end - r.begin;
      for (int j = 0; j < d; ++j) {
        T* to = w.gathered.data() + static_cast<std::size_t>(j) * stride + w.slice[k];
        const T* from = c_.col[j] + r.begin;
        for (std::size_t i = 0; i < len; i += per_chunk) std::memcpy(to + i, from + i, 32);
      }
      std::uint32_t* to = w.gathered_ids.data() + w.slice[k];
      const std::uint32_t* from = ids + r.begin;
      std::size_t i = 0;
      for (; i + 8 <= len; i += 8) std::memcpy(to + i, from + i, 32);
      for (; i < len; ++i) to[i] = from[i];
    }
    return g;
  }

  // The oracle's decision for a candidate in the band. float64: from the cell-ordered copy, which
  // holds the caller's values exactly, summed as the oracle sums (an eps_index keeps no other
  // copy); float32, whose copy is rounded: from the caller's points.
  bool exact(const typename Set::query& qv, const Set& set, std::size_t c, std::uint32_t q_id,
             std::uint32_t c_id) const {
    if constexpr (std::is_same_v<T, double>) {
      return set.reported_square(qv, c, in_.column_of_dim) <= in_.eps2;
    } else {
      return exact_within(in_.query_input, q_id, in_.data_input, c_id, in_.eps2);
    }
  }

  void query(std::uint32_t q, std::uint32_t own_begin, const candidates& cand, worker& w) const {
    const auto qv = q_.load(q);
    const std::uint32_t q_id = in_.queries->permutation[q];
    const T lo = in_.limit.lo, hi = in_.limit.hi;
    const Set& set = cand.set;
    const std::uint32_t* c_ids = cand.ids;
    // The one input id a one-sided self-join must not pair q with (none otherwise).
    const std::uint32_t self_id = in_.skip_self ? q_id : ~std::uint32_t{0};
    std::uint64_t q_count = 0;
    // Whether this query's neighbours go straight into its row. Decided by the sink's form, not
    // by the pointer: an empty table's rows may all be null.
    const bool to_row = !Counts && !Halved && w.rows != nullptr;
    std::uint32_t* const row = to_row ? w.rows->row(q_id) : nullptr;
    double* const distance_row = to_row ? w.rows->distance_row(q_id) : nullptr;
    if (to_row) {
      const auto& order = in_.queries->permutation;
      if (q + 2 < order.size()) w.rows->prefetch(order[q + 2]);
      if (q + 1 < order.size()) w.rows->prefetch_row(order[q + 1]);
    }
    std::uint64_t row_len = 0;
    // Halved rows: q's own hits gather here and are claimed in one run at the end; each hit's
    // other side is claimed at once in the candidate's row.
    const detail::row_cursors* const shared = (!Counts && Halved) ? w.shared : nullptr;
    std::uint64_t forward_len = 0;
    if constexpr (!Counts && Halved) {
      if (shared != nullptr && q + 1 < in_.queries->permutation.size()) {
        // The next query's row, where its run goes: loaded while this one computes. (A hint
        // only: the cursor may move under other threads.)
        shared->prefetch(q + 1);
      }
    }
    for (std::size_t k = 0; k < cand.spans.size(); ++k) {
      const point_range span = cand.spans[k];
      const std::uint32_t begin =
          (Halved && k == 0) ? span.begin + (q - own_begin) + 1 : span.begin;
      for (std::uint32_t c0 = begin; c0 < span.end; c0 += kernels::block_len) {
        const unsigned len = std::min<std::uint32_t>(kernels::block_len, span.end - c0);
        if constexpr (Counts) {
          count_t* local = nullptr;
          if constexpr (Halved) local = w.local_counts.data() + w.slice[k] + (c0 - span.begin);
          std::int64_t maybe = 0;
          const std::int64_t sure =
              kernels::count_block<Halved, recheck, Bytes>(set, qv, c0, len, lo, hi, local, maybe);
          q_count += static_cast<std::uint64_t>(sure);
          if (recheck && maybe > sure) {
            // Rare: some candidate between lo and hi; recompute the block and re-check those.
            for (unsigned i = 0; i < len; ++i) {
              const T s = set.distance(qv, c0 + i, hi);
              // The point itself (one-sided self-join) is counted here too, and taken off below.
              if (s > lo && s <= hi) {
                ++w.rechecks;
                if (exact(qv, set, c0 + i, q_id, c_ids[c0 + i])) {
                  ++q_count;
                  if constexpr (Halved) local[i] += 1;
                }
              }
            }
          }
        } else if (!Halved && to_row) {
          alignas(64) T s[kernels::block_len + kernels::counter_pad];
          kernels::block_distances<Bytes>(set, qv, c0, len, hi, s);
          // As below, but the ids go straight into q's row, and only true neighbours are
          // written: the row has room for exactly its count, and past it lies another task's row.
          // A bit mask of the sure hits, then one store a hit: most candidates of a block are
          // not neighbours, and a store per candidate cost 6x the count (uniform 2-D, S 50).
          const std::uint64_t sure = kernels::bits_at_most<Bytes>(s, len, lo);
          std::uint64_t maybe = 0;
          if constexpr (recheck) maybe = kernels::bits_at_most<Bytes>(s, len, hi);
          // The distance beside its id where asked: the kernel's squared distance s[i] may
          // be rounded otherwise (fused, in column order), so it is summed again as reported.
          // (Summed for the whole block in vectors instead, the fill took the same time: its
          // cost is the stores into rows in random order, not the sums.)
          auto write = [&](unsigned i, std::uint32_t c_id) {
            if (distance_row != nullptr) {
              distance_row[row_len] = set.reported(qv, c0 + i, in_.column_of_dim);
            }
            row[row_len++] = c_id;
          };
          for (std::uint64_t bits = sure; bits != 0; bits &= bits - 1) {
            const unsigned i = static_cast<unsigned>(std::countr_zero(bits));
            const std::uint32_t c_id = c_ids[c0 + i];
            if (c_id != self_id) write(i, c_id);
          }
          if (recheck && (maybe & ~sure) != 0) {
            for (unsigned i = 0; i < len; ++i) {
              const std::uint32_t c_id = c_ids[c0 + i];
              if (!(s[i] > lo && s[i] <= hi) || c_id == self_id) continue;
              ++w.rechecks;
              if (exact(qv, set, c0 + i, q_id, c_id)) write(i, c_id);
            }
          }
        } else if (Halved && shared != nullptr) {
          if constexpr (Halved && !Counts) {
            alignas(64) T s[kernels::block_len + kernels::counter_pad];
            kernels::block_distances<Bytes>(set, qv, c0, len, hi, s);
            std::uint64_t sure = kernels::bits_at_most<Bytes>(s, len, lo), maybe = 0;
            if constexpr (recheck) maybe = kernels::bits_at_most<Bytes>(s, len, hi);
            if (recheck && (maybe & ~sure) != 0) {
              // Rare: candidates between lo and hi, re-checked in float64; the true ones join
              // the sure ones.
              for (std::uint64_t bits = maybe & ~sure; bits != 0; bits &= bits - 1) {
                const unsigned i = static_cast<unsigned>(std::countr_zero(bits));
                ++w.rechecks;
                if (exact(qv, set, c0 + i, q_id, c_ids[c0 + i])) sure |= std::uint64_t{1} << i;
              }
            }
            for (std::uint64_t bits = sure; bits != 0; bits &= bits - 1) {
              const std::uint32_t c = c0 + static_cast<unsigned>(std::countr_zero(bits));
              const std::uint32_t c_id = c_ids[c];
              w.forward[forward_len++] = c_id;
              // The candidate's slot in the task (a gathered set is laid out by slot already).
              const std::uint32_t slot = w.slice[k] + (c - span.begin);
              w.back_slot.push_back(slot);
              w.back_id.push_back(q_id);
              ++w.back_count[slot];
            }
          }
        } else {
          alignas(64) T s[kernels::block_len + kernels::counter_pad];
          static_assert(Bytes / sizeof(T) <= kernels::counter_pad);
          kernels::block_distances<Bytes>(set, qv, c0, len, hi, s);
          if (Halved && w.unordered) {
            // A halved pass finds each pair once, and this sink keeps unordered pairs: each pair
            // once, as (min, max). A bit mask of the hits, then one store a hit, as for rows.
            std::uint64_t sure = kernels::bits_at_most<Bytes>(s, len, lo), maybe = 0;
            if constexpr (recheck) maybe = kernels::bits_at_most<Bytes>(s, len, hi);
            if (recheck && (maybe & ~sure) != 0) {
              // Rare: candidates between lo and hi, re-checked in float64.
              for (std::uint64_t bits = maybe & ~sure; bits != 0; bits &= bits - 1) {
                const unsigned i = static_cast<unsigned>(std::countr_zero(bits));
                ++w.rechecks;
                if (exact(qv, set, c0 + i, q_id, c_ids[c0 + i])) sure |= std::uint64_t{1} << i;
              }
            }
            index_pair* out = w.emitter->reserve(kernels::block_len);
            unsigned n = 0;
            for (std::uint64_t bits = sure; bits != 0; bits &= bits - 1) {
              const std::uint32_t c_id = c_ids[c0 + static_cast<unsigned>(std::countr_zero(bits))];
              out[n++] = {std::min(q_id, c_id), std::max(q_id, c_id)};
            }
            w.emitter->commit(n);
            continue;
          }
          // Branch-free: every candidate writes its pair(s), only sure pairs advance `n`.
          index_pair* out = w.emitter->reserve(2 * kernels::block_len);
          unsigned n = 0, uncertain = 0;
          for (unsigned i = 0; i < len; ++i) {
            const std::uint32_t c_id = c_ids[c0 + i];
            out[n] = {q_id, c_id};
            if constexpr (Halved) {
              out[n + 1] = {c_id, q_id};
              n += s[i] <= lo ? 2u : 0u;
            } else {
              n += static_cast<unsigned>(s[i] <= lo) & static_cast<unsigned>(c_id != self_id);
            }
            if constexpr (recheck) uncertain += s[i] <= hi ? 1u : 0u;
          }
          if (recheck && uncertain > n / (Halved ? 2u : 1u)) {
            // Rare: candidates between lo and hi, re-checked in float64.
            for (unsigned i = 0; i < len; ++i) {
              const std::uint32_t c_id = c_ids[c0 + i];
              if (!(s[i] > lo && s[i] <= hi) || c_id == self_id) continue;
              ++w.rechecks;
              if (!exact(qv, set, c0 + i, q_id, c_id)) continue;
              out[n++] = {q_id, c_id};
              if constexpr (Halved) out[n++] = {c_id, q_id};
            }
          }
          w.emitter->commit(n);
        }
      }
    }
    if (to_row) w.rows->wrote(q_id, row_len);
    if constexpr (Halved && !Counts) {
      if (shared != nullptr && forward_len > 0) {
        // A plain loop: rows are short, and a call per row cost more than the copy.
        std::uint32_t* to = shared->claim(q, forward_len);
        for (std::uint64_t k = 0; k < forward_len; ++k) to[k] = w.forward[k];
      }
    }
    if constexpr (Counts) {
      if constexpr (Halved) {
        add_count(in_, w, q, static_cast<std::uint32_t>(q_count));
      } else {
        // One task owns each query of a one-sided join: a plain store. In a self-join the point
        // itself was counted in its own cell (distance 0, always a sure pair or re-checked).
        in_.counts[q] = static_cast<std::uint32_t>(q_count) - (in_.skip_self ? 1u : 0u);
      }
    }
  }

  const join_inputs<T>& in_;
  Set q_, c_;
};

}  // namespace epsjoin::detail::cpu
