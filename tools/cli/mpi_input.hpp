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
  double load_seconds = 0, partition_seconds = 0, exchange_seconds = 0;
};

/// Collective. Nothing when the input could not be read: one rank has printed its one-line error.
/// Binary inputs (a join's queries too) are read in ranges of rows by every rank, a self-join's
/// text file in ranges of lines, generated sets in ranges of rows; a join's text sets, a pipe and
/// the papers' draws by rank 0.
std::optional<distributed_input> distribute_input(const session& s, resources& res,
                                                  const input_request& request);

}  // namespace epsjoin::cli::mpi
