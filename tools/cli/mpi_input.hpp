#pragma once
// How mpi-join's ranks get their points: every rank reads its share of a binary file (.npy, .f64,
// .f32; a join's query file too) or of a self-join's text file (the lines that start in its
// share of the bytes), or generates its share of a generated set's rows, and the points are
// exchanged between ranks; or rank 0 reads (a join's text, a pipe) or generates them (the
// papers' sequential draws) and scatters each rank its box and halo. Either way, each rank ends
// with its own points and halo.

#include <cstddef>
#include <optional>
#include <string>

#include "epsjoin/partition.hpp"
#include "epsjoin/resources.hpp"
#include "mpi_exchange.hpp"

namespace epsjoin::cli::mpi {

/// How the ranks share a self-join (mpi-join --split): boxes, each rank its points and their
/// halo; or work items, every rank all the points and one share of the join's items (counts
/// only, an engine that shares its items); or automatic: items where boxes would put more than
/// items_above_halo of the points in halos (each rank would then hold most of them anyway, and
/// compute the halo's distances twice).
enum class rank_split { automatic, boxes, items };
inline constexpr double items_above_halo = 0.5;

struct input_request {
  std::string file;                            // --input, or empty
  std::string generate;                        // --generate, or empty
  std::string queries_file, queries_generate;  // A of a join A x B (--queries, --generate-queries)
  std::size_t dim = 0;
  bool paper = false;
  std::string output;  // checked on rank 0 before anything is read
  double eps = 0;
  std::size_t sample_size = 0;  // 0: default_partition_sample(d)
  double point_cost = 1;
  rank_split split = rank_split::boxes;  // automatic or items: a counts-only self-join
};

struct distributed_input {
  rank_points local;
  /// A x B: the rank's queries, those whose cut coordinate lies in its box (no halo: a query
  /// meets every neighbour in its box's points and halo).
  std::optional<rank_points> queries;
  std::size_t n_queries = 0;
  partition_plan plan;  // rank 0's (the cuts are every rank's)
  std::string description;
  std::size_t n = 0, d = 0;
  bool read_in_ranges = false;
  /// Every rank holds all the points (`local`, all its own) and counts a share of the items.
  bool by_items = false;
  /// The fraction of the points that boxes put in halos: measured on rank 0's sample (or its
  /// points, where it read them all) where the split was automatic, else 0.
  double boxes_halo_fraction = 0;
  double load_seconds = 0, partition_seconds = 0, exchange_seconds = 0;
};

/// Collective. Nothing when the input could not be read: one rank has printed its one-line error.
/// Binary inputs (a join's queries too) are read in ranges of rows by every rank, a self-join's
/// text file in ranges of lines, generated sets in ranges of rows; a join's text sets, a pipe and
/// the papers' draws by rank 0.
std::optional<distributed_input> distribute_input(const session& s, resources& res,
                                                  const input_request& request);

}  // namespace epsjoin::cli::mpi
