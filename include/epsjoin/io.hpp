#pragma once
/// @file io.hpp
/// @brief Reading and writing point sets and results.
///
/// Point-set formats: CSV / whitespace text (one point a line), NumPy `.npy` (float32 or
/// float64, C order, header versions 1, 2 and 3), and raw little-endian binary (`.f64`,
/// `.f32`) whose dimension must be given. Readers reject malformed input with an `io_error`
/// naming the file and the line and column (text) or byte offset (binary); nothing is skipped.
/// The exact rules of every format are in docs/formats.md.
/// @code
///   epsjoin::dataset pts = epsjoin::read_dataset("points.csv");
///   epsjoin::read_options raw; raw.dim = 3;
///   epsjoin::dataset xyz = epsjoin::read_dataset("stars.f64", raw);
/// @endcode

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "epsjoin/dataset.hpp"
#include "epsjoin/result.hpp"

namespace epsjoin {

enum class data_format {
  automatic,  ///< from the extension: .npy, .f64, .f32, anything else is text
  text,       ///< comma-, tab- or space-separated decimal numbers, one point a line
  npy,        ///< NumPy array of shape (n, d), <f8 or <f4, C order
  raw_f64,    ///< little-endian float64, row-major, no header; needs the dimension
  raw_f32,    ///< little-endian float32, row-major, no header; needs the dimension
};

/// @brief The format `automatic` resolves to for `path`.
data_format format_for_path(const std::string& path);

struct read_options {
  data_format format = data_format::automatic;
  /// Required for raw binary. Otherwise 0, or the dimension the file must have.
  std::size_t dim = 0;
  /// Binary formats (npy, raw) only: read rows [first_row, first_row + max_rows) of the file,
  /// clipped to its rows (a range past the end gives no points), after checking the whole file's
  /// header and size; so that several processes can each read a share. Text refuses a range
  /// (invalid_argument): its rows are not at known offsets.
  std::size_t first_row = 0;
  std::size_t max_rows = static_cast<std::size_t>(-1);
};

/// @brief Reads a point set. Text and raw_f64 give float64; npy keeps its dtype; raw_f32 gives
///        float32. Throws io_error (file, line/byte, column, what is wrong) on bad input.
dataset read_dataset(const std::string& path, const read_options& options = {});

/// @brief One reader's share of a text point file, for several readers that each take one (the
///        ranks of `epsjoin mpi-join`): the lines that start in a range of bytes.
struct text_share {
  std::string text;            ///< the share's lines, the last one to its end
  std::uint64_t lines = 0;     ///< how many lines start in the share
  std::uint64_t file_bytes = 0;
  bool at_start = false;       ///< the share starts the file (where a .npy magic or BOM would be)
};

/// @brief Reads the lines of text file `path` that start in bytes [first_byte, first_byte +
///        max_bytes) (a line belongs to the share its first byte lies in). Regular files only.
text_share read_text_share(const std::string& path, std::uint64_t first_byte,
                           std::uint64_t max_bytes);

/// @brief What a share's parse found, for the checks only the whole file can make: that there
///        are points, that every point has as many values, that no blank line precedes one.
struct text_share_info {
  std::size_t d = 0;                      ///< values of its points; 0 when it has none
  std::uint64_t trailing_blank_line = 0;  ///< its first blank line after its last point (or, with
                                          ///< no points, its first blank line); 0 when none
};

/// @brief The number of values of a share's first point and its line within the share (1-based;
///        0 and 0 when it has none), without parsing the values: what the shares after the one
///        holding the file's first point check their points against.
std::size_t first_point_values(const text_share& share, std::uint64_t& line);

/// @brief The points of a share (float64), its lines numbered from `first_line` + 1 (the lines
///        of the shares before it), with read_dataset's checks and messages for what lies within
///        the share. `file_d` and `file_d_line`: for a share after the one that holds the file's
///        first point, that point's values and line (0 for the share that holds it), so every
///        point is checked against it as a whole-file read does. An empty dataset when it holds
///        no point.
dataset parse_text_share(const text_share& share, const std::string& path, std::size_t dim,
                         std::uint64_t first_line, text_share_info& info, std::size_t file_d = 0,
                         std::uint64_t file_d_line = 0);

/// @brief The shape of a binary point file (npy, raw), checked as read_dataset checks it, without
///        reading its values: what a reader of row ranges needs first. Text: invalid_argument.
struct dataset_shape {
  std::size_t n = 0;
  std::size_t d = 0;
  scalar_type type = scalar_type::f64;
};
dataset_shape read_shape(const std::string& path, const read_options& options = {});

/// @brief Writes a point set. Text is comma-separated with `text_digits` significant digits
///        (17 round-trips float64 exactly; 0 writes the shortest text that round-trips).
void write_dataset(const std::string& path, dataset_view data,
                   data_format format = data_format::automatic, int text_digits = 17);

/// @brief Binary CSR file (documented in docs/formats.md):
///        8-byte magic "EPSJCSR1", uint64 n_queries, uint64 n_pairs,
///        uint64 offsets[n_queries + 1], uint32 neighbors[n_pairs]; all little-endian.
void write_csr(const std::string& path, const neighbor_table& table);
neighbor_table read_csr(const std::string& path);

/// @brief How a result reaches an output path.
enum class output_kind {
  /// A new name or a regular file (symlinks followed to it): written under a temporary name
  /// beside it and renamed over it once complete, so it never looks complete when it is not.
  file,
  /// Standard output ("-"), a character device such as /dev/null, a FIFO or a Unix socket:
  /// written in place and in order, with no temporary file and no rename. Formats that must
  /// seek back (a pair .npy's count) are refused before any work.
  stream,
};

/// @brief What an output path names (after symlinks).
enum class output_node { new_file, regular_file, standard_output, character_device, fifo, socket };

/// @brief What an output path names, as check_output_path found it.
struct output_target {
  std::string path;         ///< as given
  std::string destination;  ///< file: the regular file written (links followed); stream: what is
                            ///< opened ("-" for standard output)
  output_kind kind = output_kind::file;
  output_node node = output_node::new_file;
  std::string what;              ///< "a new file", "a regular file", "a FIFO", ... for messages
  bool standard_output = false;  ///< the process's standard output (a summary goes elsewhere)
};

/// @brief Classifies an output path before any work and throws io_error (naming the reason) for
///        one no result may be written to: a directory, a block device, a link that leads
///        nowhere it can write, a folder that cannot take the temporary file. Run before a long
///        join so that a bad output path fails at once, not after the join. Every writer below
///        treats its path this way.
output_target check_output_path(const std::string& path);

/// @brief Removes every result file still being written (each lives under a temporary name
///        beside its target until it is complete). Async-signal-safe: for a program's SIGINT or
///        SIGTERM handler, so an interrupted run leaves neither a partial file nor a stray
///        temporary one. Files are renamed to their target only once complete.
void remove_unfinished_outputs() noexcept;

/// @brief Pairs as NumPy .npy of shape (n, 2), dtype <u4.
void write_pairs_npy(const std::string& path, std::span<const index_pair> pairs);
/// @brief The header write_pairs_npy puts before `n_pairs` pairs, for a writer that places the
///        pairs itself (mpi-join's ranks, each writing its own part of one file).
std::string pairs_npy_header(std::uint64_t n_pairs);
/// @brief Pairs as text, one "i,j" line per pair.
void write_pairs_csv(const std::string& path, std::span<const index_pair> pairs);
/// @brief Cluster labels (epsjoin::dbscan's, -1 for noise): NumPy .npy of shape (n,), dtype <i8,
///        when `path` ends in .npy (any case), else text, one decimal label a line, in point
///        order.
void write_labels(const std::string& path, std::span<const std::int64_t> labels);
/// @brief An OPTICS reachability plot as CSV text: a header line, then one line per point in
///        OPTICS order, "point,reachability,core_distance,predecessor[,label]" (by point id,
///        `labels` only when not empty; distances in shortest round-trip form, "inf" where
///        infinite; -1 for no predecessor).
void write_optics(const std::string& path, std::span<const std::uint32_t> ordering,
                  std::span<const double> reachability, std::span<const double> core_distances,
                  std::span<const std::int64_t> predecessor,
                  std::span<const std::int64_t> labels = {});
/// @brief Neighbour counts in query order: NumPy .npy of shape (n,), dtype <u8, when `path` ends
///        in .npy (any case), else text, one decimal count a line.
void write_counts(const std::string& path, std::span<const std::uint64_t> counts);

}  // namespace epsjoin
