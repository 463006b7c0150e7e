#pragma once
// Definitions behind grid_dispatch.hpp, included only by the grid_run_*.cpp translation units.

#include "base/parallel.hpp"
#include "cpu/grid_dispatch.hpp"
#include "epsjoin/error.hpp"

namespace epsjoin::detail::cpu::dispatch {

template <class T, class Set, bool Halved, bool Counts, int Bytes>
void execute_width(detail::join_request& req, const join_inputs<T>& in, Set qset, Set dset,
                   std::vector<worker_state<T>>& workers) {
  const grid_executor<T, Set, Halved, Counts, Bytes> exec(in, qset, dset);
  const grid_schedule& s = *in.schedule;
  detail::parallel_for(
      static_cast<unsigned>(workers.size()), s.chunk_begin.size() - 1, 1,
      [&](std::size_t chunk, std::size_t, unsigned w) {
        for (std::uint32_t t = s.chunk_begin[chunk]; t < s.chunk_begin[chunk + 1]; ++t) {
          exec.run(s.tasks[t], workers[w]);
        }
      },
      req.options.progress);
}

template <class T, class Set, bool Halved, bool Counts>
void execute_output(detail::join_request& req, const join_inputs<T>& in, Set qset, Set dset,
                    std::vector<worker_state<T>>& workers) {
#if EPSJOIN_ISA_HAS_V3
  if (in.avx2) return execute_width<T, Set, Halved, Counts, 32>(req, in, qset, dset, workers);
#endif
  execute_width<T, Set, Halved, Counts, 16>(req, in, qset, dset, workers);
}

template <class T, class Set>
void execute_kind(detail::join_request& req, const join_inputs<T>& in, bool halved, Set qset,
                  Set dset, std::vector<worker_state<T>>& workers) {
  // The pass counts when it has somewhere to count to (a row sink is counted before it is filled).
  const bool counts = in.counts != nullptr;
  if (halved) {
    counts ? execute_output<T, Set, true, true>(req, in, qset, dset, workers)
           : execute_output<T, Set, true, false>(req, in, qset, dset, workers);
  } else {
    counts ? execute_output<T, Set, false, true>(req, in, qset, dset, workers)
           : execute_output<T, Set, false, false>(req, in, qset, dset, workers);
  }
}

template <class T, int D, distance_metric M>
kernels::column_set<T, D, M> columns_of(const point_block<T>& b) {
  kernels::column_set<T, D, M> set;
  for (int j = 0; j < D; ++j) set.col[j] = b.column(static_cast<std::size_t>(j));
  return set;
}

template <class T, int D, distance_metric M>
void run_columns(detail::join_request& req, const join_inputs<T>& in, bool halved,
                 const point_block<T>& qb, const point_block<T>& db,
                 std::vector<worker_state<T>>& workers) {
  execute_kind(req, in, halved, columns_of<T, D, M>(qb), columns_of<T, D, M>(db), workers);
}

template <class T, int Every, distance_metric M>
void run_rows(detail::join_request& req, const join_inputs<T>& in, bool halved,
              const point_block<T>& qb, const point_block<T>& db,
              std::vector<worker_state<T>>& workers) {
  using set = kernels::row_set<T, Every, M>;
  execute_kind(req, in, halved, set{qb.data(), qb.d}, set{db.data(), db.d}, workers);
}

}  // namespace epsjoin::detail::cpu::dispatch

namespace epsjoin::detail::cpu {

template <class T, distance_metric M>
void execute_columns(detail::join_request& req, const join_inputs<T>& in, bool halved,
                     const point_block<T>& qb, const point_block<T>& db,
                     std::vector<worker_state<T>>& workers) {
  switch (db.d) {
    case 1: return dispatch::run_columns<T, 1, M>(req, in, halved, qb, db, workers);
    case 2: return dispatch::run_columns<T, 2, M>(req, in, halved, qb, db, workers);
    case 3: return dispatch::run_columns<T, 3, M>(req, in, halved, qb, db, workers);
    case 4: return dispatch::run_columns<T, 4, M>(req, in, halved, qb, db, workers);
    case 5: return dispatch::run_columns<T, 5, M>(req, in, halved, qb, db, workers);
    case 6: return dispatch::run_columns<T, 6, M>(req, in, halved, qb, db, workers);
    case 7: return dispatch::run_columns<T, 7, M>(req, in, halved, qb, db, workers);
    case 8: return dispatch::run_columns<T, 8, M>(req, in, halved, qb, db, workers);
    default: throw epsjoin::invalid_argument("cpu-grid: the column layout holds at most 8 dimensions");
  }
}

template <class T, distance_metric M>
void execute_rows(detail::join_request& req, const join_inputs<T>& in, bool halved,
                  const point_block<T>& qb, const point_block<T>& db, int early_exit,
                  std::vector<worker_state<T>>& workers) {
  switch (early_exit) {
    case 0: return dispatch::run_rows<T, 0, M>(req, in, halved, qb, db, workers);
    case 8: return dispatch::run_rows<T, 8, M>(req, in, halved, qb, db, workers);
    default: return dispatch::run_rows<T, 16, M>(req, in, halved, qb, db, workers);
  }
}

}  // namespace epsjoin::detail::cpu

// The explicit instantiations each grid_run_*.cpp file makes, spelled once: the task loops for
// scalar T and metric M in the column layout and in the row layout.
#define EPSJOIN_GRID_RUN_COLUMNS(T, M)                                                        \
  template void execute_columns<T, M>(detail::join_request&, const join_inputs<T>&, bool,     \
                                      const point_block<T>&, const point_block<T>&,           \
                                      std::vector<worker_state<T>>&)
#define EPSJOIN_GRID_RUN_ROWS(T, M)                                                           \
  template void execute_rows<T, M>(detail::join_request&, const join_inputs<T>&, bool,        \
                                   const point_block<T>&, const point_block<T>&, int,         \
                                   std::vector<worker_state<T>>&)
