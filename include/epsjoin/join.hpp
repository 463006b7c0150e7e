#pragma once
/// @file join.hpp
/// @brief The entry points: self-join, A x B join, and the engine list.
///
/// @code
///   epsjoin::resources res;
///   epsjoin::join_options opt;
///   opt.eps = 0.01;
///   epsjoin::csr_sink sink;
///   epsjoin::join_stats s = epsjoin::self_join(res, points.view(), opt, sink);
///   // sink.table() holds every point's neighbours; s.pairs == sink.table().n_pairs()
/// @endcode

#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"
#include "epsjoin/sink.hpp"
#include "epsjoin/stats.hpp"

namespace epsjoin {

/// @brief All pairs (i, j), i != j, of `data` within `options.eps`, delivered to `sink`.
/// @param res     execution resources (threads, device, buffers)
/// @param data    [host] [n x d, row-major] points; n <= 2^32 - 1
/// @param options eps, engine, precision, ...
/// @param sink    receives ordered pairs (both directions) or counts
/// @throws invalid_argument for a bad eps, empty d, unknown engine or parameter;
///         unavailable for an engine not built in or without its device.
join_stats self_join(resources& res, dataset_view data, const join_options& options,
                     result_sink& sink);

/// @brief All pairs (a, b), a in `queries`, b in `data`, within `options.eps`.
/// @param queries [host] [n_a x d, row-major] query points A
/// @param data    [host] [n_b x d, row-major] indexed points B, same d and type as A
join_stats join(resources& res, dataset_view queries, dataset_view data,
                const join_options& options, result_sink& sink);

/// @brief The rows of points [0, n_rows) of the self-join of `points`: every neighbour in
///        `points` of each of them. For a piece of a partition given first and its halo after it
///        (epsjoin/partition.hpp), these are the piece's complete rows, found with the self-join's
///        halving (each distance once), which a join of the piece against piece and halo lacks.
///        The sink sees a join of queries [0, n_rows) against data [0, points.n) (sink_info says
///        so: self_join false); self pairs come only with options.include_self.
/// @throws invalid_argument for n_rows > points.n, and as self_join does.
join_stats self_join_rows(resources& res, dataset_view points, std::size_t n_rows,
                          const join_options& options, result_sink& sink);

/// @brief Convenience: a self-join into a CSR table.
neighbor_table self_join(resources& res, dataset_view data, const join_options& options,
                         join_stats* stats = nullptr);

/// @brief One parameter an engine takes (join_options::params), for listings such as
/// `epsjoin info`.
struct engine_param_info {
  std::string key;
  /// "tuning" (what users tune), "ablation" (switches that reproduce the papers' variants) or
  /// "debug" (test-only sizes that override the memory budget).
  std::string kind;
  std::string description;  ///< one line
};

/// @brief One registered engine.
struct engine_info {
  std::string name;
  std::string processor;    ///< "cpu", "gpu", "tensor", "cpu+gpu"
  std::string description;
  bool available = false;   ///< compiled in and its hardware present
  std::string unavailable_reason;
  /// Relative band around eps inside which the engine may disagree with the exact answer
  /// (1e-12 for exact FP64 engines).
  double error_band = 1e-12;
  /// The metrics the engine takes (join_options::metric): those it computes itself, plus cosine
  /// and haversine for an engine that computes euclidean (run through unit vectors).
  std::vector<distance_metric> metrics;
  /// True when the engine takes a periodic box (join_options::box).
  bool periodic = false;
  /// True when the engine counts a share of the work items (join_options::share).
  bool shares_work_items = false;
  /// Every parameter the engine takes; any other key is an error.
  std::vector<engine_param_info> params;
};

/// @brief Every engine epsjoin knows, available or not, in registry order.
std::vector<engine_info> engines();

}  // namespace epsjoin
