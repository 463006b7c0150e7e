#include "mpi_input.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <utility>

#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "input.hpp"

namespace epsjoin::cli::mpi {

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Whether every rank succeeded; otherwise the lowest failing rank prints its error, alone, so a
// bad input gives one line as `epsjoin join` does.
bool all_succeeded(const session& s, const std::string& error) {
  const int mine = error.empty() ? s.size() : s.rank();
  int first = s.size();
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  if (first == s.rank()) std::fprintf(stderr, "epsjoin mpi-join: error: %s\n", error.c_str());
  return first == s.size();
}

// What rank 0 found of the input, for every rank: n, d, element type (0 f64, 1 f32), queries.
struct input_shape {
  std::uint64_t n = 0, d = 0, type = 0, queries = 0;
};

// Collective: rank 0's shape on every rank, or nothing when a rank failed (its error printed once).
std::optional<input_shape> share_shape(const session& s, const std::string& error,
                                       input_shape shape) {
  if (!all_succeeded(s, error)) return std::nullopt;
  std::uint64_t values[4] = {shape.n, shape.d, shape.type, shape.queries};
  check(MPI_Bcast(values, 4, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast (shape)");
  return input_shape{values[0], values[1], values[2], values[3]};
}

void refuse_too_many(std::size_t n) {
  if (n > INT32_MAX) throw std::runtime_error("mpi-join takes at most 2^31 - 1 points for now");
}

// This rank's share of the rows of a binary file of n rows: rows [first, first + count).
struct row_share {
  std::uint64_t first = 0, count = 0;
};

// --sample, or the library's default for d dimensions.
std::size_t sample_size_for(const input_request& request, std::size_t d) {
  return request.sample_size != 0 ? request.sample_size : default_partition_sample(d);
}

row_share share_of(const session& s, std::uint64_t n) {
  const auto ranks = static_cast<std::uint64_t>(s.size());
  const auto rank = static_cast<std::uint64_t>(s.rank());
  const std::uint64_t first = n * rank / ranks;
  return {first, n * (rank + 1) / ranks - first};
}

double halo_fraction(const box_members& members, std::size_t n) {
  std::size_t halo = 0;
  for (const auto& box : members.halo) halo += box.size();
  return n > 0 ? static_cast<double>(halo) / static_cast<double>(n) : 0.0;
}

// Collective: rank 0's measure of the boxes' halo decides an automatic split for every rank.
void decide_split(const session& s, const input_request& request, double halo,
                  distributed_input& in) {
  check(MPI_Bcast(&halo, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast (halo fraction)");
  in.boxes_halo_fraction = request.split == rank_split::automatic ? halo : 0.0;
  in.by_items = request.split == rank_split::items ||
                (request.split == rank_split::automatic && halo > items_above_halo);
}

// Collective, once every rank holds its share `mine` (points first_id, first_id + 1, ...): each
// rank samples its share in proportion to its rows, rank 0 cuts, every rank learns the cuts, and
// the points go to their boxes with their halos.
void partition_and_exchange(const session& s, resources& res, const input_request& request,
                            dataset mine, std::uint64_t first_id, distributed_input& in) {
  const auto partition_start = clock_type::now();
  const std::size_t sample_size = sample_size_for(request, in.d);
  const std::size_t share = in.n == 0 ? 0 : (sample_size * mine.n() + in.n - 1) / in.n;
  const dataset sample = gather_sample(s, take_sample(mine.view(), share), in.d);
  if (s.rank() == 0) {
    in.plan = plan_from_sample(res, sample, in.n, request.eps, static_cast<std::size_t>(s.size()),
                               request.point_cost);
  }
  in.plan.partition.eps = request.eps;
  broadcast_partition(s, in.plan.partition);
  double halo = 0;
  if (s.rank() == 0 && request.split == rank_split::automatic && sample.n() > 0) {
    halo = halo_fraction(assign_points(in.plan.partition, sample.view(), res.threads()),
                         sample.n());
  }
  decide_split(s, request, halo, in);
  in.partition_seconds = since(partition_start);
  const auto exchange_start = clock_type::now();
  const scalar_type type = mine.view().type;
  in.local = in.by_items
                 ? share_everything(s, std::move(mine), in.n, in.d, type)
                 : exchange_boxes(mine.view(), first_id, res.threads(), in.plan.partition);
  in.exchange_seconds = since(exchange_start);
}

// One set of the input (the points, or a join's queries) that every rank takes a share of: a
// binary file read in ranges of rows, or a generated set drawn in ranges of rows (each point from
// its own index: the values are the whole set's).
struct set_in_shares {
  const std::string& file;
  const std::string& spec;
  const char* flag;  // for a spec's errors

  std::string name() const { return spec.empty() ? file : "generated " + spec; }
  // On rank 0.
  dataset_shape shape(const read_options& options) const {
    if (spec.empty()) return read_shape(file, options);
    const generator_spec g = parse_spec_argument(flag, spec);
    require_points(flag, spec, g);
    return {g.n, g.d, scalar_type::f64};
  }
  dataset rows(read_options options, row_share share) const {
    if (!spec.empty()) {
      return generate_rows(parse_spec_argument(flag, spec), share.first, share.count);
    }
    options.first_row = share.first;
    options.max_rows = share.count;
    return read_dataset(file, options);
  }
};

// Runs `step`, turning what it throws into `error` (a usage error is not a std::exception).
template <class Step>
void into_error(std::string& error, Step&& step) {
  try {
    step();
  } catch (const usage_error& e) {
    error = e.message;
  } catch (const std::exception& e) {
    error = e.what();
  }
}

std::optional<distributed_input> read_in_ranges(const session& s, resources& res,
                                                const input_request& request) {
  distributed_input in;
  in.read_in_ranges = true;
  const set_in_shares points{request.file, request.generate, "--generate"};
  const set_in_shares query_set{request.queries_file, request.queries_generate,
                                "--generate-queries"};
  const bool with_queries = !request.queries_file.empty() || !request.queries_generate.empty();
  in.description = points.name();
  const auto load_start = clock_type::now();
  read_options options;
  options.dim = request.dim;
  input_shape found_shape;
  std::string error;
  if (s.rank() == 0) {
    into_error(error, [&] {
      if (!request.output.empty()) check_output_path(request.output);
      const dataset_shape found = points.shape(options);
      refuse_too_many(found.n);
      found_shape = {found.n, found.d, found.type == scalar_type::f64 ? 0u : 1u, 0};
      if (with_queries) {
        const dataset_shape queries = query_set.shape(options);
        refuse_too_many(queries.n);
        if (queries.n > 0 && found.n > 0 && (queries.d != found.d || queries.type != found.type)) {
          throw std::runtime_error("the query points (" + query_set.name() +
                                   ") and the input points (" + points.name() +
                                   ") differ in dimension or element type");
        }
        found_shape.queries = queries.n;
        if (found.n == 0) {
          found_shape.d = queries.d;
          found_shape.type = queries.type == scalar_type::f64 ? 0u : 1u;
        }
      }
    });
  }
  const std::optional<input_shape> shape = share_shape(s, error, found_shape);
  if (!shape) return std::nullopt;
  in.n = shape->n;
  in.d = shape->d;
  in.n_queries = shape->queries;
  const row_share points_share = share_of(s, in.n), queries_share = share_of(s, in.n_queries);
  dataset mine, my_queries;
  into_error(error, [&] {
    mine = points.rows(options, points_share);
    if (with_queries) my_queries = query_set.rows(options, queries_share);
  });
  if (!all_succeeded(s, error)) return std::nullopt;
  in.load_seconds = since(load_start);

  partition_and_exchange(s, res, request, std::move(mine), points_share.first, in);
  const auto exchange_start = clock_type::now();
  if (with_queries) {
    // A query goes to the box that holds it, and only there.
    in.queries = exchange_boxes(my_queries.view(), queries_share.first, res.threads(),
                                in.plan.partition, false);
  }
  in.exchange_seconds += since(exchange_start);
  return in;
}

// Whether a --generate spec asks for the papers' draws in sequence (paper=1), which only the
// whole set reproduces (a spec that does not parse is reported where it is generated).
bool drawn_in_sequence(const std::string& text) {
  try {
    return parse_generator_spec(text).paper;
  } catch (const epsjoin::invalid_argument&) {
    return false;
  }
}

// Collective: what only the whole file can say after the shares' parses (each checked its points
// against the file's first point): that there are points, and no blank line before one in a
// later share; the first violation in the file as the error, on rank 0.
std::string check_text_shares(const session& s, const std::string& path,
                              const text_share_info& info, std::uint64_t points,
                              std::uint64_t file_bytes) {
  const std::uint64_t mine[2] = {info.trailing_blank_line, points};
  std::vector<std::uint64_t> all(s.rank() == 0 ? 2 * static_cast<std::size_t>(s.size()) : 0);
  check(MPI_Gather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, 0, MPI_COMM_WORLD),
        "MPI_Gather (text shares)");
  if (s.rank() != 0) return {};
  const std::size_t ranks = static_cast<std::size_t>(s.size());
  auto blank_of = [&](std::size_t r) { return all[2 * r]; };
  auto points_of = [&](std::size_t r) { return all[2 * r + 1]; };
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < ranks; ++r) total += points_of(r);
  if (total == 0) {
    return path + (file_bytes == 0 ? ": empty file (no points)"
                                   : ": no points (only blank or comment lines)");
  }
  // A blank line after a share's last point, with a point in a later share: the first in the
  // file, so walking back the last one found.
  std::string error;
  bool points_later = false;
  for (std::size_t r = ranks; r-- > 0;) {
    if (blank_of(r) != 0 && points_later) {
      error = path + ": line " + std::to_string(blank_of(r)) +
              ": blank line before or between points (only blank lines at the end of the file "
              "are allowed)";
    }
    points_later = points_later || points_of(r) > 0;
  }
  return error;
}

// A self-join's text input, every rank parsing the lines that start in its share of the bytes
// (line numbers from an exclusive scan of the shares' lines), then exchanged as binary shares are.
std::optional<distributed_input> read_text_in_ranges(const session& s, resources& res,
                                                     const input_request& request) {
  distributed_input in;
  in.read_in_ranges = true;
  in.description = request.file;
  const auto load_start = clock_type::now();
  std::string error;
  text_share share;
  if (s.rank() == 0 && !request.output.empty()) {
    try {
      check_output_path(request.output);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (error.empty()) {
    try {
      const std::uint64_t bytes = std::filesystem::file_size(request.file);
      const row_share mine = share_of(s, bytes);
      share = read_text_share(request.file, mine.first, mine.count);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!all_succeeded(s, error)) return std::nullopt;
  std::uint64_t lines_before = 0;
  check(MPI_Exscan(&share.lines, &lines_before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Exscan (lines)");
  if (s.rank() == 0) lines_before = 0;  // MPI leaves rank 0's result undefined
  // The file's first point fixes how many values every point has: the first share that holds a
  // point says how many and where; the shares after it check against that.
  std::uint64_t within = 0;
  const std::uint64_t values = first_point_values(share, within);
  const std::uint64_t mine_first[2] = {values, values == 0 ? 0 : lines_before + within};
  std::vector<std::uint64_t> firsts(2 * static_cast<std::size_t>(s.size()));
  check(MPI_Allgather(mine_first, 2, MPI_UINT64_T, firsts.data(), 2, MPI_UINT64_T, MPI_COMM_WORLD),
        "MPI_Allgather (first points)");
  std::size_t file_d = 0;
  std::uint64_t file_d_line = 0;
  for (int r = 0; r < s.rank() && file_d == 0; ++r) {
    file_d = firsts[2 * static_cast<std::size_t>(r)];
    file_d_line = firsts[2 * static_cast<std::size_t>(r) + 1];
  }
  text_share_info info;
  dataset mine;
  try {
    mine =
        parse_text_share(share, request.file, request.dim, lines_before, info, file_d, file_d_line);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!all_succeeded(s, error)) return std::nullopt;
  error = check_text_shares(s, request.file, info, mine.n(), share.file_bytes);
  if (!all_succeeded(s, error)) return std::nullopt;
  std::uint64_t counts[2] = {mine.n(), 0}, first_id = 0;
  check(MPI_Exscan(counts, &first_id, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Exscan (points)");
  if (s.rank() == 0) first_id = 0;
  check(MPI_Allreduce(counts, counts + 1, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce (points)");
  std::uint64_t d = info.d;
  check(MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD),
        "MPI_Allreduce (dimension)");
  in.n = counts[1];
  in.d = d;
  if (mine.n() == 0) mine = dataset(0, d);
  try {
    refuse_too_many(in.n);
  } catch (const std::exception& e) {
    error = s.rank() == 0 ? e.what() : "";
  }
  if (!all_succeeded(s, error)) return std::nullopt;
  in.load_seconds = since(load_start);
  partition_and_exchange(s, res, request, std::move(mine), first_id, in);
  return in;
}

std::optional<distributed_input> read_on_root(const session& s, resources& res,
                                              const input_request& request) {
  distributed_input in;
  loaded_points data, queries;
  const bool with_queries = !request.queries_file.empty() || !request.queries_generate.empty();
  input_shape found_shape;
  std::string error;
  if (s.rank() == 0) {
    try {
      if (!request.output.empty()) check_output_path(request.output);
      data = load_points(request.file, request.generate, request.dim, request.paper);
      refuse_too_many(data.points.n());
      if (with_queries) {
        queries = load_points(request.queries_file, request.queries_generate, request.dim,
                              request.paper, "--generate-queries");
        refuse_too_many(queries.points.n());
        if (queries.points.n() > 0 && data.points.n() > 0 &&
            (queries.points.d() != data.points.d() ||
             queries.points.view().type != data.points.view().type)) {
          throw std::runtime_error("the query points (" + queries.description +
                                   ") and the input "
                                   "points (" +
                                   data.description +
                                   ") differ in dimension or "
                                   "element type");
        }
      }
      // The points that exist give the dimension and element type.
      const dataset_view typed = data.points.n() > 0 ? data.points.view() : queries.points.view();
      found_shape = {data.points.n(), typed.d, typed.type == scalar_type::f64 ? 0u : 1u,
                     queries.points.n()};
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const std::optional<input_shape> shape = share_shape(s, error, found_shape);
  if (!shape) return std::nullopt;
  in.n = shape->n;
  in.d = shape->d;
  in.n_queries = shape->queries;
  in.description = data.description;
  in.load_seconds = data.seconds;

  const auto partition_start = clock_type::now();
  box_members members, query_members;
  double halo = 0;
  if (s.rank() == 0) {
    in.plan =
        plan_partition(res, data.points.view(), request.eps, static_cast<std::size_t>(s.size()),
                       sample_size_for(request, data.points.d()), request.point_cost);
    // Split by items as asked, no point goes to a box.
    if (request.split != rank_split::items) {
      members = assign_points(in.plan.partition, data.points.view(), res.threads());
      halo = halo_fraction(members, data.points.n());
    }
    if (with_queries) {
      // A query goes to the box that holds it, and only there.
      query_members = assign_points(in.plan.partition, queries.points.view(), res.threads());
      for (auto& box_halo : query_members.halo) box_halo.clear();
    }
  }
  decide_split(s, request, halo, in);
  in.partition_seconds = since(partition_start);

  const auto exchange_start = clock_type::now();
  const scalar_type type = shape->type == 0 ? scalar_type::f64 : scalar_type::f32;
  if (in.by_items) {
    in.local = share_everything(s, s.rank() == 0 ? std::move(data.points) : dataset(0, in.d, type),
                                in.n, in.d, type);
    in.exchange_seconds = since(exchange_start);
    return in;
  }
  in.local = scatter_boxes(s, data.points.view(), members, in.d, type);
  if (with_queries) {
    in.queries = scatter_boxes(s, queries.points.view(), query_members, in.d, type);
  }
  in.exchange_seconds = since(exchange_start);
  return in;
}

}  // namespace

std::optional<distributed_input> distribute_input(const session& s, resources& res,
                                                  const input_request& request) {
  auto binary = [](const std::string& file) {
    return !file.empty() && format_for_path(file) != data_format::text;
  };
  // Binary files are read in ranges of rows, a join's queries too when they are a binary file;
  // a self-join's text file in ranges of lines.
  const bool with_queries = !request.queries_file.empty() || !request.queries_generate.empty();
  if (!with_queries && !request.file.empty() && !binary(request.file)) {
    // Not a regular file (a pipe), or none: rank 0 reads it, or says why it cannot.
    std::error_code ec;
    if (std::filesystem::is_regular_file(request.file, ec))
      return read_text_in_ranges(s, res, request);
  }
  // Every rank takes a share of a binary file, and of a generated set unless it is the papers'
  // (drawn in sequence).
  auto in_shares = [&](const std::string& file, const std::string& spec) {
    return spec.empty() ? binary(file) : !request.paper && !drawn_in_sequence(spec);
  };
  const bool in_ranges =
      in_shares(request.file, request.generate) &&
      (!with_queries || in_shares(request.queries_file, request.queries_generate));
  return in_ranges ? read_in_ranges(s, res, request) : read_on_root(s, res, request);
}

}  // namespace epsjoin::cli::mpi
