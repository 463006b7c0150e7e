#pragma once
// mpi-join's data movement, MPI collectives only: rank 0 scatters each rank its box and halo, the
// ranks' rows come back as counts to rank 0 and as one CSR or pairs file written collectively
// (MPI-IO).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/partition.hpp"
#include "epsjoin/sink.hpp"
#include "mpi_comm.hpp"

namespace epsjoin::cli::mpi {

/// What one rank joins: its own points first, then its halo, with their global ids.
struct rank_points {
  dataset points;
  std::vector<std::uint32_t> ids;  ///< empty where the rank holds every point in id order
  std::size_t own = 0;
};

/// Collective. `all` and `members` are read on rank 0 only; `d` and `type` are every rank's.
rank_points scatter_boxes(const session& s, dataset_view all, const box_members& members,
                          std::size_t d, scalar_type type);

/// Collective, when every rank has read a share of the points: `mine` are points first_id,
/// first_id + 1, ...; each goes to the rank of its box and (`with_halo`, every rank alike) to the
/// ranks whose halo holds it (MPI_Alltoallv). The own points arrive in id order (the ranks'
/// shares are in id order). A join's queries go without halo: a query meets all its neighbours
/// in its box's points and halo.
rank_points exchange_boxes(dataset_view mine, std::uint64_t first_id, unsigned threads,
                           const box_partition& partition, bool with_halo = true);

/// Collective, for the work-items split, where every rank holds all the points: each rank's
/// rows `mine` (the ranks' runs, in rank order, are points 0, 1, ..., n - 1; a rank may have
/// none) to every rank, in id order (no ids: a point's place is its id). All of them are the
/// rank's own points. A rank that holds
/// them all already (rank 0, where it read the whole input) keeps `mine` as they are.
rank_points share_everything(const session& s, dataset mine, std::size_t n, std::size_t d,
                             scalar_type type);

/// Collective: each point's count summed over the ranks (each rank counted a share of the work
/// items of the whole join), on rank 0 (empty elsewhere).
std::vector<std::uint64_t> sum_counts(const session& s, std::vector<std::uint64_t> counts);

/// Collective: every rank's part of the sample (float64), on rank 0, rank by rank.
dataset gather_sample(const session& s, const dataset& part, std::size_t d);

/// Collective: rank 0's partition on every rank.
void broadcast_partition(const session& s, box_partition& partition);

/// A rank's result rows: one per own point, neighbours as global ids, sorted.
struct rank_rows {
  std::vector<std::uint64_t> counts;
  std::vector<std::uint32_t> neighbors;  // empty for a count-only join
};

/// Collective: every point's count, in global id order, on rank 0 (empty elsewhere). `own_ids`
/// are the ids of the rank's rows, ascending.
std::vector<std::uint64_t> gather_counts(const session& s, const std::vector<std::uint64_t>& counts,
                                         std::span<const std::uint32_t> own_ids, std::size_t n);

/// Collective: the binary CSR file of docs/formats.md, the rows in global id order, each rank
/// writing its own rows at offsets rank 0 scans from `global_counts` (rank 0's). Written beside
/// `path` and renamed once complete, as the single-process writers do.
void write_csr_file(const session& s, const std::string& path,
                    const std::vector<std::uint64_t>& global_counts,
                    std::span<const std::uint32_t> own_ids, const rank_rows& rows);

/// Collective: the unique pairs of a self-join (i < j; (i, i) too where the rows hold them), or
/// every (query, neighbour) pair of a join A x B, as the .npy or CSV pairs file of
/// docs/formats.md, sorted by row and neighbour, each rank writing its rows' pairs at offsets
/// rank 0 scans; written beside `path` and renamed once complete. `n_rows`: the rows of the
/// whole join.
void write_pairs_file(const session& s, const std::string& path, std::size_t n_rows,
                      std::span<const std::uint32_t> own_ids, const rank_rows& rows,
                      bool self_join, pair_file_format format);

/// Collective: every rank's values, on rank 0 (empty elsewhere), rank by rank.
std::vector<double> gather_doubles(const session& s, const std::vector<double>& values);

/// Collective: every rank's text, on rank 0 (empty elsewhere), rank by rank.
std::vector<std::string> gather_strings(const session& s, const std::string& text);

}  // namespace epsjoin::cli::mpi
