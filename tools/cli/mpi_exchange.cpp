#include "mpi_exchange.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <utility>

#include "epsjoin/io.hpp"

namespace epsjoin::cli::mpi {

namespace {

template <class T>
std::vector<int> int_counts(const std::vector<T>& sizes, const char* what) {
  std::vector<int> out;
  for (const auto& s : sizes) out.push_back(count(s, what));
  return out;
}

}  // namespace

rank_points scatter_boxes(const session& s, dataset_view all, const box_members& members,
                          std::size_t d, scalar_type type) {
  const std::size_t ranks = static_cast<std::size_t>(s.size());
  const std::size_t value_bytes = type == scalar_type::f64 ? sizeof(double) : sizeof(float);
  const std::size_t point_bytes = d * value_bytes;
  // Rank 0 lays out each rank's points (own, then halo) one after another.
  std::vector<std::uint64_t> sizes(2 * ranks, 0);
  std::vector<unsigned char> send_points;
  std::vector<std::uint32_t> send_ids;
  std::vector<std::size_t> per_rank(ranks, 0);
  if (s.rank() == 0) {
    for (std::size_t r = 0; r < ranks; ++r) {
      sizes[2 * r] = members.own[r].size();
      sizes[2 * r + 1] = members.halo[r].size();
      per_rank[r] = members.own[r].size() + members.halo[r].size();
    }
    const std::size_t total = std::accumulate(per_rank.begin(), per_rank.end(), std::size_t{0});
    send_points.resize(total * point_bytes);
    send_ids.reserve(total);
    const auto* source = static_cast<const unsigned char*>(all.data);
    for (std::size_t r = 0; r < ranks; ++r) {
      for (const auto* list : {&members.own[r], &members.halo[r]}) {
        for (std::uint32_t id : *list) {
          std::memcpy(send_points.data() + send_ids.size() * point_bytes,
                      source + static_cast<std::size_t>(id) * point_bytes, point_bytes);
          send_ids.push_back(id);
        }
      }
    }
  }
  std::uint64_t mine[2] = {0, 0};
  check(MPI_Scatter(sizes.data(), 2, MPI_UINT64_T, mine, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD),
        "MPI_Scatter");
  rank_points out;
  out.own = mine[0];
  const std::size_t local = mine[0] + mine[1];
  out.points = dataset(local, d, type);
  out.ids.resize(local);

  MPI_Datatype point_type = MPI_DATATYPE_NULL;
  check(MPI_Type_contiguous(count(point_bytes, "bytes per point"), MPI_BYTE, &point_type),
        "MPI_Type_contiguous");
  const datatype point(point_type);
  std::vector<int> counts, displs;
  if (s.rank() == 0) {
    counts = int_counts(per_rank, "points sent to a rank");
    displs = displacements(counts, "points sent in all");
  }
  void* receive = type == scalar_type::f64 ? static_cast<void*>(out.points.f64())
                                           : static_cast<void*>(out.points.f32());
  const int local_count = count(local, "points of a rank");
  check(MPI_Scatterv(send_points.data(), counts.data(), displs.data(), point.get(), receive,
                     local_count, point.get(), 0, MPI_COMM_WORLD),
        "MPI_Scatterv (points)");
  check(MPI_Scatterv(send_ids.data(), counts.data(), displs.data(), MPI_UINT32_T, out.ids.data(),
                     local_count, MPI_UINT32_T, 0, MPI_COMM_WORLD),
        "MPI_Scatterv (ids)");
  return out;
}

namespace {

// Every rank's own ids, on rank 0, rank by rank, and how many each rank has.
std::vector<std::uint32_t> gather_ids(const session& s, std::span<const std::uint32_t> own_ids,
                                      std::size_t n, std::vector<int>& sizes,
                                      std::vector<int>& displs) {
  const int mine = count(own_ids.size(), "points of a rank");
  sizes.assign(s.rank() == 0 ? static_cast<std::size_t>(s.size()) : 0, 0);
  check(MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather (row counts)");
  std::vector<std::uint32_t> ids(s.rank() == 0 ? n : 0);
  if (s.rank() == 0) displs = displacements(sizes, "points");
  check(MPI_Gatherv(own_ids.data(), mine, MPI_UINT32_T, ids.data(), sizes.data(), displs.data(),
                    MPI_UINT32_T, 0, MPI_COMM_WORLD),
        "MPI_Gatherv (ids)");
  return ids;
}

}  // namespace

std::vector<std::uint64_t> gather_counts(const session& s, const std::vector<std::uint64_t>& counts,
                                         std::span<const std::uint32_t> own_ids, std::size_t n) {
  std::vector<int> sizes, displs;
  const std::vector<std::uint32_t> ids = gather_ids(s, own_ids, n, sizes, displs);
  std::vector<std::uint64_t> by_rank(s.rank() == 0 ? n : 0);
  check(MPI_Gatherv(counts.data(), count(counts.size(), "points of a rank"), MPI_UINT64_T,
                    by_rank.data(), sizes.data(), displs.data(), MPI_UINT64_T, 0, MPI_COMM_WORLD),
        "MPI_Gatherv (counts)");
  std::vector<std::uint64_t> global(s.rank() == 0 ? n : 0);
  for (std::size_t k = 0; k < ids.size(); ++k) global[ids[k]] = by_rank[k];
  return global;
}

std::vector<double> gather_doubles(const session& s, const std::vector<double>& values) {
  const int each = count(values.size(), "values");
  std::vector<double> out(s.rank() == 0 ? values.size() * static_cast<std::size_t>(s.size()) : 0);
  check(
      MPI_Gather(values.data(), each, MPI_DOUBLE, out.data(), each, MPI_DOUBLE, 0, MPI_COMM_WORLD),
      "MPI_Gather");
  return out;
}

rank_points share_everything(const session& s, dataset mine, std::size_t n, std::size_t d,
                             scalar_type type) {
  const auto ranks = static_cast<std::size_t>(s.size());
  std::vector<std::uint64_t> rows(ranks);
  const std::uint64_t my_rows = mine.n();
  check(MPI_Allgather(&my_rows, 1, MPI_UINT64_T, rows.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD),
        "MPI_Allgather (rows of a rank)");
  rank_points all;
  const bool have_all = my_rows == n && n > 0;
  all.points = have_all ? std::move(mine) : dataset(n, d, type);
  const std::size_t row_bytes = d * size_of(type);
  auto* bytes = type == scalar_type::f64 ? reinterpret_cast<char*>(all.points.f64())
                                         : reinterpret_cast<char*>(all.points.f32());
  // Each rank's run from that rank, in pieces MPI's int counts can carry.
  constexpr std::size_t piece = std::size_t{1} << 30;
  std::uint64_t first = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    char* at = bytes + first * row_bytes;
    const std::size_t run_bytes = rows[r] * row_bytes;
    first += rows[r];
    if (first > n) throw std::runtime_error("internal: the ranks hold more points than the set");
    if (r == static_cast<std::size_t>(s.rank()) && run_bytes > 0 && !have_all) {
      std::memcpy(at, mine.view().data, run_bytes);
    }
    for (std::size_t done = 0; done < run_bytes; done += piece) {
      check(MPI_Bcast(at + done, count(std::min(piece, run_bytes - done), "bytes"), MPI_BYTE,
                      static_cast<int>(r), MPI_COMM_WORLD),
            "MPI_Bcast (points)");
    }
  }
  if (first != n) throw std::runtime_error("internal: the ranks hold fewer points than the set");
  all.own = n;  // ids left empty: the points are in id order
  return all;
}

std::vector<std::uint64_t> sum_counts(const session& s, std::vector<std::uint64_t> counts) {
  const bool root = s.rank() == 0;
  constexpr std::size_t piece = std::size_t{1} << 27;
  for (std::size_t done = 0; done < counts.size(); done += piece) {
    const int n = count(std::min(piece, counts.size() - done), "counts");
    std::uint64_t* at = counts.data() + done;
    check(MPI_Reduce(root ? MPI_IN_PLACE : at, root ? at : nullptr, n, MPI_UINT64_T, MPI_SUM, 0,
                     MPI_COMM_WORLD),
          "MPI_Reduce (counts)");
  }
  if (!root) counts.clear();
  return counts;
}

std::vector<std::string> gather_strings(const session& s, const std::string& text) {
  const int length = count(text.size(), "bytes of text");
  const bool root = s.rank() == 0;
  std::vector<int> lengths(root ? static_cast<std::size_t>(s.size()) : 0);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather (text lengths)");
  std::vector<int> displs(lengths.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displs[r] = count(total, "bytes of text");
    total += static_cast<std::size_t>(lengths[r]);
  }
  std::vector<char> all(total);
  check(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv (text)");
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    texts.emplace_back(all.data() + displs[r], static_cast<std::size_t>(lengths[r]));
  }
  return texts;
}

namespace {

constexpr std::size_t header_bytes = 24;  // magic, n_queries, n_pairs

// Rank 0's part: the header and the offsets, in pieces MPI's int counts can carry.
void write_header_and_offsets(MPI_File file, const std::vector<std::uint64_t>& offsets) {
  char header[header_bytes];
  std::memcpy(header, "EPSJCSR1", 8);
  const std::uint64_t n = offsets.size() - 1, pairs = offsets.back();
  std::memcpy(header + 8, &n, 8);
  std::memcpy(header + 16, &pairs, 8);
  check(MPI_File_write_at(file, 0, header, header_bytes, MPI_BYTE, MPI_STATUS_IGNORE),
        "MPI_File_write_at (header)");
  constexpr std::size_t piece = std::size_t{1} << 26;
  for (std::size_t at = 0; at < offsets.size(); at += piece) {
    const std::size_t take = std::min(piece, offsets.size() - at);
    check(
        MPI_File_write_at(file, static_cast<MPI_Offset>(header_bytes + 8 * at), offsets.data() + at,
                          static_cast<int>(take), MPI_UINT64_T, MPI_STATUS_IGNORE),
        "MPI_File_write_at (offsets)");
  }
}

}  // namespace

namespace {

// Where each of this rank's rows starts in a file's array of rows in global id order, in
// elements, and how many elements the file holds: rank 0 scans `global_counts` (its own) and
// hands each rank its rows' starts.
struct row_places {
  std::vector<std::uint64_t> starts;
  std::vector<std::uint64_t> offsets;  // rank 0: the global scan, n + 1 entries
  std::uint64_t rows = 0, total = 0;
};

row_places place_rows(const session& s, const std::vector<std::uint64_t>& global_counts,
                      std::span<const std::uint32_t> own_ids, std::size_t n) {
  std::vector<int> sizes, displs;
  const std::vector<std::uint32_t> ids = gather_ids(s, own_ids, n, sizes, displs);
  row_places out;
  std::vector<std::uint64_t> starts_by_rank;
  std::uint64_t header[2] = {0, 0};  // rows, total
  if (s.rank() == 0) {
    out.offsets.resize(global_counts.size() + 1);
    out.offsets[0] = 0;
    for (std::size_t i = 0; i < global_counts.size(); ++i) {
      out.offsets[i + 1] = out.offsets[i] + global_counts[i];
    }
    for (std::uint32_t id : ids) starts_by_rank.push_back(out.offsets[id]);
    header[0] = global_counts.size();
    header[1] = out.offsets.back();
  }
  check(MPI_Bcast(header, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast (file sizes)");
  out.rows = header[0];
  out.total = header[1];
  out.starts.resize(own_ids.size());
  check(MPI_Scatterv(starts_by_rank.data(), sizes.data(), displs.data(), MPI_UINT64_T,
                     out.starts.data(), count(out.starts.size(), "points of a rank"), MPI_UINT64_T,
                     0, MPI_COMM_WORLD),
        "MPI_Scatterv (row starts)");
  return out;
}

// Collective: writes this rank's rows (counts[k] elements from `data`, row k at element starts[k]
// of the array that begins at byte `at`), all ranks at once; rows that follow each other in the
// file merge into one block. Elements are uint32 (MPI_UINT32_T) or text bytes (MPI_BYTE).
template <class Element>
void write_rows_at(MPI_File file, MPI_Offset at, const std::vector<std::uint64_t>& starts,
                   const std::vector<std::uint64_t>& counts, const std::vector<Element>& data) {
  static_assert(sizeof(Element) == 4 || sizeof(Element) == 1);
  const MPI_Datatype element = sizeof(Element) == 4 ? MPI_UINT32_T : MPI_BYTE;
  constexpr auto size = static_cast<MPI_Aint>(sizeof(Element));
  std::vector<int> block_lengths;
  std::vector<MPI_Aint> block_starts;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] == 0) continue;
    const auto start = static_cast<MPI_Aint>(size * static_cast<MPI_Aint>(starts[k]));
    if (!block_starts.empty() &&
        block_starts.back() + size * static_cast<MPI_Aint>(block_lengths.back()) == start &&
        static_cast<std::uint64_t>(block_lengths.back()) + counts[k] <= INT32_MAX) {
      block_lengths.back() += static_cast<int>(counts[k]);
    } else {
      block_lengths.push_back(count(counts[k], "elements of a row"));
      block_starts.push_back(start);
    }
  }
  MPI_Datatype file_type = element;
  std::optional<datatype> rows_type;
  if (!block_lengths.empty()) {
    check(MPI_Type_create_hindexed(count(block_lengths.size(), "row blocks"), block_lengths.data(),
                                   block_starts.data(), element, &file_type),
          "MPI_Type_create_hindexed");
    rows_type.emplace(file_type);
    file_type = rows_type->get();
  }
  check(MPI_File_set_view(file, at, element, file_type, "native", MPI_INFO_NULL),
        "MPI_File_set_view");
  check(MPI_File_write_all(file, data.data(), count(data.size(), "elements of a rank"), element,
                           MPI_STATUS_IGNORE),
        "MPI_File_write_all");
}

// Collective: `path` written beside itself as PATH.part, `bytes` long, by `write` on every rank,
// then renamed once every rank is done, as the single-process writers do (over the file a
// symlink leads to, never over the link).
template <class Write>
void write_file(const session& s, const std::string& path, std::uint64_t bytes, Write&& write) {
  const std::string destination = check_output_path(path).destination;
  const std::string partial = destination + ".part";
  MPI_File file = MPI_FILE_NULL;
  check(MPI_File_open(MPI_COMM_WORLD, partial.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &file),
        ("MPI_File_open (" + partial + ")").c_str());
  try {
    check(MPI_File_set_size(file, static_cast<MPI_Offset>(bytes)), "MPI_File_set_size");
    write(file);
  } catch (...) {
    MPI_File_close(&file);
    throw;
  }
  check(MPI_File_close(&file), "MPI_File_close");
  if (s.rank() == 0 && std::rename(partial.c_str(), destination.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + partial + " to " + path);
  }
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

}  // namespace

void write_csr_file(const session& s, const std::string& path,
                    const std::vector<std::uint64_t>& global_counts,
                    std::span<const std::uint32_t> own_ids, const rank_rows& rows) {
  const row_places places = place_rows(s, global_counts, own_ids, global_counts.size());
  const std::uint64_t bytes = header_bytes + 8 * (places.rows + 1) + 4 * places.total;
  write_file(s, path, bytes, [&](MPI_File file) {
    if (s.rank() == 0) write_header_and_offsets(file, places.offsets);
    write_rows_at(file, static_cast<MPI_Offset>(header_bytes + 8 * (places.rows + 1)),
                  places.starts, rows.counts, rows.neighbors);
  });
}

namespace {

// `value` in decimal and then `after`, at the end of `text`.
void append_decimal(std::vector<char>& text, std::uint32_t value, char after) {
  char digits[16];  // a uint32 has at most 10
  char* stop = std::to_chars(digits, digits + sizeof digits, value).ptr;
  text.insert(text.end(), digits, stop);
  text.push_back(after);
}

}  // namespace

void write_pairs_file(const session& s, const std::string& path, std::size_t n_rows,
                      std::span<const std::uint32_t> own_ids, const rank_rows& rows, bool self_join,
                      pair_file_format format) {
  // This rank's pairs, row after row: (i, j) for every neighbour j of row i, in a self-join only
  // j >= i (each pair once, and (i, i) with --include-self, as 'epsjoin join' writes them); as
  // two uint32 words (.npy) or an "i,j" line (CSV) each. per_row: each row's elements.
  std::vector<std::uint64_t> per_row(rows.counts.size(), 0);
  std::vector<std::uint32_t> words;
  std::vector<char> text;
  const bool csv = format == pair_file_format::csv;
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < rows.counts.size(); ++k) {
    const std::uint32_t i = own_ids[k];
    const std::size_t before = csv ? text.size() : words.size();
    for (std::uint64_t e = 0; e < rows.counts[k]; ++e) {
      const std::uint32_t j = rows.neighbors[at + e];
      if (self_join && j < i) continue;
      if (csv) {
        append_decimal(text, i, ',');
        append_decimal(text, j, '\n');
      } else {
        words.push_back(i);
        words.push_back(j);
      }
    }
    per_row[k] = (csv ? text.size() : words.size()) - before;
    at += rows.counts[k];
  }
  const std::vector<std::uint64_t> global = gather_counts(s, per_row, own_ids, n_rows);
  const row_places places = place_rows(s, global, own_ids, n_rows);
  if (csv) {
    write_file(s, path, places.total,
               [&](MPI_File file) { write_rows_at(file, 0, places.starts, per_row, text); });
    return;
  }
  const std::string header = pairs_npy_header(places.total / 2);
  write_file(s, path, header.size() + 4 * places.total, [&](MPI_File file) {
    if (s.rank() == 0) {
      check(MPI_File_write_at(file, 0, header.data(), count(header.size(), "header bytes"),
                              MPI_BYTE, MPI_STATUS_IGNORE),
            "MPI_File_write_at (npy header)");
    }
    write_rows_at(file, static_cast<MPI_Offset>(header.size()), places.starts, per_row, words);
  });
}

}  // namespace epsjoin::cli::mpi
