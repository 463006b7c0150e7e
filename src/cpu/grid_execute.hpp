#pragma once
// cpu-grid's task loop: one task = some queries of one query cell against the candidate ranges
// of the cells it examines. Instantiated per point layout, precision, join kind and output.

#include <algorithm>
#include <atomic>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/emitter.hpp"
#include "cpu/grid_kernels.hpp"
#include "cpu/grid_points.hpp"
#include "cpu/grid_schedule.hpp"

namespace epsjoin::cpu {

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
  /// Count mode: neighbours per query position (atomic adds when both sides are counted).
  std::uint32_t* counts;
};

template <class T>
struct worker_state {
  std::optional<detail::pair_emitter> emitter;
  std::vector<point_range> scratch, spans;
  std::vector<std::uint32_t> slice;
  std::vector<kernels::lane_count<T>> local_counts;  // candidate-side counts of one task
  std::uint64_t rechecks = 0;
};

inline void atomic_add(std::uint32_t& target, std::uint32_t value) {
  std::atomic_ref<std::uint32_t>(target).fetch_add(value, std::memory_order_relaxed);
}

/// Halved: a self-join under unicomp / lid_unicomp (each unordered pair computed once, both
/// directions delivered); otherwise one-sided (A x B, or a self-join under full). Bytes: SIMD
/// width, 16 (baseline) or 32 (compiled for x86-64-v3; run only where cpu_has_avx2()).
template <class T, class Set, bool Halved, bool Counts, int Bytes>
class grid_executor {
 public:
  static constexpr bool recheck = std::is_same_v<T, float>;

  grid_executor(const join_inputs<T>& in, Set queries, Set data)
      : in_(in), q_(queries), c_(data) {}

  using count_t = kernels::lane_count<T>;
  using worker = worker_state<T>;

  void run(const grid_task& t, worker& w) const {
    if constexpr (Bytes == 32) {
      run_avx2(t, w);
    } else {
      run_task(t, w);
    }
  }

 private:
  EPSJOIN_GRID_AVX2 void run_avx2(const grid_task& t, worker& w) const { run_task(t, w); }

  void run_task(const grid_task& t, worker& w) const {
    const grid::host_index& qi = *in_.queries;
    const grid::host_index& di = *in_.data;
    const auto ranges = in_.schedule->ranges(t.cell, qi, di, *in_.settings, w.scratch);
    w.spans.clear();
    std::size_t first = 0;
    if constexpr (Halved) {
      // The own cell, pairs (q, c > q) only; joined to the next range when it follows directly.
      point_range own{qi.cell_begin[t.cell], qi.cell_begin[t.cell + 1]};
      if (!ranges.empty() && ranges[0].begin == own.end) {
        own.end = ranges[0].end;
        first = 1;
      }
      w.spans.push_back(own);
    }
    w.spans.insert(w.spans.end(), ranges.begin() + static_cast<std::ptrdiff_t>(first),
                   ranges.end());
    if constexpr (Counts && Halved) {
      w.slice.clear();
      std::uint32_t total = 0;
      for (const point_range& r : w.spans) {
        w.slice.push_back(total);
        total += r.end - r.begin;
      }
      w.local_counts.assign(total + kernels::counter_pad, 0);
    }
    for (std::uint32_t q = t.q_begin; q < t.q_end; ++q) query(q, w);
    if constexpr (Counts && Halved) {
      for (std::size_t k = 0; k < w.spans.size(); ++k) {
        const count_t* local = w.local_counts.data() + w.slice[k];
        for (std::uint32_t p = w.spans[k].begin; p < w.spans[k].end; ++p) {
          if (const count_t n = local[p - w.spans[k].begin]) {
            atomic_add(in_.counts[p], static_cast<std::uint32_t>(n));
          }
        }
      }
    }
  }

  bool exact(std::uint32_t q, std::uint32_t c) const {
    return exact_within(in_.query_input, in_.queries->permutation[q], in_.data_input,
                        in_.data->permutation[c], in_.eps2);
  }

  void query(std::uint32_t q, worker& w) const {
    const auto qv = q_.load(q);
    const std::uint32_t q_id = in_.queries->permutation[q];
    const std::uint32_t* c_ids = in_.data->permutation.data();
    const T lo = in_.limit.lo, hi = in_.limit.hi;
    std::uint64_t q_count = 0;
    // The one position a one-sided self-join must not pair q with (none otherwise).
    const std::uint32_t self_pos = in_.skip_self ? q : ~std::uint32_t{0};
    for (std::size_t k = 0; k < w.spans.size(); ++k) {
      const point_range span = w.spans[k];
      const std::uint32_t begin = (Halved && k == 0) ? q + 1 : span.begin;
      for (std::uint32_t c0 = begin; c0 < span.end; c0 += kernels::block_len) {
        const unsigned len = std::min<std::uint32_t>(kernels::block_len, span.end - c0);
        if constexpr (Counts) {
          count_t* local = nullptr;
          if constexpr (Halved) local = w.local_counts.data() + w.slice[k] + (c0 - span.begin);
          std::int64_t maybe = 0;
          const std::int64_t sure =
              kernels::count_block<Halved, recheck, Bytes>(c_, qv, c0, len, lo, hi, local, maybe);
          q_count += static_cast<std::uint64_t>(sure);
          if (recheck && maybe > sure) {
            // Rare: some candidate between lo and hi; recompute the block and re-check those.
            for (unsigned i = 0; i < len; ++i) {
              const T s = c_.distance(qv, c0 + i, hi);
              if (s > lo && s <= hi) {
                ++w.rechecks;
                if (exact(q, c0 + i)) {
                  ++q_count;
                  if constexpr (Halved) local[i] += 1;
                }
              }
            }
          }
        } else {
          alignas(64) T s[kernels::block_len + kernels::counter_pad];
          static_assert(Bytes / sizeof(T) <= kernels::counter_pad);
          kernels::block_distances<Bytes>(c_, qv, c0, len, hi, s);
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
              n += static_cast<unsigned>(s[i] <= lo) & static_cast<unsigned>(c0 + i != self_pos);
            }
            if constexpr (recheck) uncertain += s[i] <= hi ? 1u : 0u;
          }
          if (recheck && uncertain > n / (Halved ? 2u : 1u)) {
            // Rare: candidates between lo and hi, re-checked in float64.
            for (unsigned i = 0; i < len; ++i) {
              if (!(s[i] > lo && s[i] <= hi)) continue;
              ++w.rechecks;
              if (!exact(q, c0 + i)) continue;
              const std::uint32_t c_id = c_ids[c0 + i];
              out[n++] = {q_id, c_id};
              if constexpr (Halved) out[n++] = {c_id, q_id};
            }
          }
          w.emitter->commit(n);
        }
      }
    }
    if constexpr (Counts) {
      if constexpr (Halved) {
        atomic_add(in_.counts[q], static_cast<std::uint32_t>(q_count));
      } else {
        // One task owns each query of a one-sided join: a plain store. The point itself was
        // counted in its own cell (distance 0).
        in_.counts[q] = static_cast<std::uint32_t>(q_count) - (in_.skip_self ? 1u : 0u);
      }
    }
  }

  const join_inputs<T>& in_;
  Set q_, c_;
};

}  // namespace epsjoin::cpu
