#pragma once
/// @file index.hpp
/// @brief A reusable eps-index: the grid of a point set built once at a largest radius, then
/// joined with any number of query sets, or with itself, at any eps up to that radius (as a
/// FAISS index or a cuVS index is built once and searched many times).
///
/// @code
///   epsjoin::resources res;
///   epsjoin::eps_index index(res, points.view(), 0.05);   // the grid, built once
///   epsjoin::csr_sink near;
///   index.query(res, queries.view(), 0.02, {}, near);     // near.table(): row a = points within
///                                                          // 0.02 of queries' point a
///   epsjoin::count_sink counts(true);
///   index.self_join(res, 0.05, {}, counts);               // the points among themselves
/// @endcode
///
/// Results are those of `epsjoin::join` / `epsjoin::self_join` with engine "cpu-grid" at the
/// same eps: the same pairs, ties at exactly eps included, ids in the caller's point order, to
/// any host sink. The index owns copies of what it needs (the caller's points may be freed or
/// changed once the constructor returns); it holds no reference to `resources`, and queries
/// leave it unchanged, so several threads may query one index at once (each with its own
/// resources and sink).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "epsjoin/dataset.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/options.hpp"
#include "epsjoin/resources.hpp"
#include "epsjoin/result.hpp"
#include "epsjoin/sink.hpp"
#include "epsjoin/stats.hpp"

namespace epsjoin {

namespace detail {
struct eps_index_state;
}

/// @brief What an eps_index is built for; fixed for its lifetime, as a FAISS index's metric is.
struct index_options {
  /// float32 or float64 distances (float32 results equal float64's: candidates near eps are
  /// re-checked in float64). Points whose float32 copies would overflow are indexed in float64.
  scalar_type precision = scalar_type::f64;
  /// euclidean, manhattan, chebyshev (computed on the grid), cosine or haversine (unit vectors
  /// on the grid, every pair re-checked in the metric, as join_options::metric does).
  distance_metric metric = distance_metric::euclidean;
  angle_unit angles = angle_unit::radians;  ///< haversine only, as join_options::angles
  double sphere_radius = 1.0;               ///< haversine only, as join_options::sphere_radius
  /// cpu-grid's parameters (`epsjoin info`), as join_options::params with engine "cpu-grid".
  std::map<std::string, std::string> params;
  /// Up to this many (at most 8) more grids, at max_eps / 2, / 4, ...: a query takes the finest
  /// whose cells are still as wide as its eps. A finer grid is kept only while its non-empty
  /// cells hold at least 8 points on average (sparser ones cost more cell visits than they save
  /// distances); each costs about the index's memory again. Pays where queries at eps well
  /// below max_eps meet many neighbours within max_eps (docs/index.md).
  unsigned finer_grids = 0;
};

/// @brief Per-query options of an eps_index.
struct query_options {
  /// self_join only: also report (i, i) for every point.
  bool include_self = false;
  /// As join_options::progress: the fraction done, now and then; an exception it throws
  /// cancels the query.
  std::function<void(double)> progress;
};

/// @brief The eps-grid of a point set at a largest radius max_eps, with the points copied in
/// cell order in the index's precision: what a join builds before it computes a distance.
/// Queries at eps <= max_eps reuse it whole (cells of side >= eps still hold every neighbour in
/// the adjacent cells); only the query points are binned per query. A query at an eps much
/// smaller than max_eps examines candidates out to max_eps: docs/index.md gives the measured
/// cost, and when building another index at the smaller radius pays.
class eps_index {
 public:
  /// @brief Builds the index.
  /// @param res     threads and memory limits for the build (not kept)
  /// @param data    [host] [n x d, row-major] points, float64 or float32, finite; n <= 2^32 - 1
  /// @param max_eps the largest eps any query will use (finite, > 0)
  /// @param options precision, metric, cpu-grid parameters
  /// @throws invalid_argument for a bad max_eps, points, metric option or parameter;
  ///         out_of_memory when the index would not fit the host memory limit.
  eps_index(resources& res, dataset_view data, double max_eps, const index_options& options = {});
  ~eps_index();
  /// A moved-from index may only be destroyed or assigned to.
  eps_index(eps_index&&) noexcept;
  eps_index& operator=(eps_index&&) noexcept;
  eps_index(const eps_index&) = delete;
  eps_index& operator=(const eps_index&) = delete;

  double max_eps() const noexcept;
  std::size_t n() const noexcept;  ///< indexed points
  std::size_t d() const noexcept;
  const index_options& options() const noexcept;
  /// @brief The precision the distances are computed in (float64 where float32 cannot hold the
  ///        points, or the metric is computed in float64 only).
  scalar_type precision() const noexcept;
  /// @brief Host bytes the index holds.
  std::uint64_t memory_bytes() const noexcept;
  /// @brief The build's stages ("index") and notes (grid, cells).
  const join_stats& build_stats() const noexcept;

  /// @brief All pairs (a, b), a in `queries`, b in the indexed points, within `eps`, to `sink`
  ///        (as `epsjoin::join(res, queries, data, ...)`).
  /// @param queries [host] [m x d, row-major] query points, float64 or float32, finite
  /// @throws invalid_argument for eps > max_eps (build the index at the largest eps you will
  ///         query), eps <= 0, queries of another d, or include_self (self_join only).
  join_stats query(resources& res, dataset_view queries, double eps, const query_options& options,
                   result_sink& sink) const;
  /// @brief Convenience: the query into a CSR table with rows sorted by id.
  neighbor_table query(resources& res, dataset_view queries, double eps,
                       const query_options& options = {}, join_stats* stats = nullptr) const;
  /// @brief All pairs (i, j), i != j, of the indexed points within `eps` (as
  ///        `epsjoin::self_join`; (i, i) too with include_self).
  join_stats self_join(resources& res, double eps, const query_options& options,
                       result_sink& sink) const;

 private:
  std::unique_ptr<detail::eps_index_state> state_;
};

}  // namespace epsjoin
