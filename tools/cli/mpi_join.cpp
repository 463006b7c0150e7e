// epsjoin mpi-join: one rank a process under mpirun. Rank 0 reads the points and cuts them into
// one box a rank (mpi_partition), each rank joins its own points as queries against its box and
// halo with the library's public join, and the rows come back by global id (mpi_exchange).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine_args.hpp"
#include "epsjoin/build_info.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "input.hpp"
#include "mpi_commands.hpp"
#include "mpi_input.hpp"
#include "summary.hpp"

namespace epsjoin::cli {

const command_spec& mpi_join_command() {
  static const command_spec spec{
      "mpi-join",
      "mpi-join (--input FILE | --generate SPEC) --eps X [options]   (under mpirun -np R)",
      "The self-join of 'epsjoin join' spread over the ranks of an MPI job, one rank a process:\n"
      "the points (each rank reads its rows of a binary file) are cut into R boxes along one\n"
      "coordinate, balanced by the estimated work of a sample (its neighbour counts at eps), not\n"
      "by point count; each rank gets its box and the halo of points within eps of it and\n"
      "self-joins both with the local engine (each distance once), keeping its own points' rows.\n"
      "Every point's row is computed on its own rank; a rank runs GPU engines on one GPU of its\n"
      "host (the host's ranks take its devices in turn). The result equals the single-process\n"
      "join's (rows sorted by id). Euclidean distance only (docs/mpi.md).",
      {
          {"input", "FILE",
           "points to join: .npy (float32/float64) or raw .f64/.f32 (needs --dim), each rank "
           "reading its range of rows; or CSV/whitespace text, each rank reading the lines that start "
           "in its share of the bytes"},
          {"generate", "SPEC",
           "generate the points instead, e.g. expo:2:100000 (see 'epsjoin gen')"},
          {"queries", "FILE",
           "query points A for a join A x B against the input B: B is cut into boxes with halos, "
           "each query goes to the rank of its box (binary files and generated sets are taken in "
           "ranges of rows by every rank; a join's text sets by rank 0)"},
          {"generate-queries", "SPEC", "generate the query points A instead"},
          {"paper", "", "with --generate expo:...: the papers' exact Expo* values"},
          {"dim", "D", "dimension of raw binary input (.f64/.f32); for other formats a check"},
          {"eps", "X", "the radius (not its square); finite and > 0; required"},
          {"engine", "NAME", "each rank's engine (default auto); 'epsjoin info' lists them"},
          {"param", "KEY=VALUE", "engine-specific setting, as for 'epsjoin join'", true},
          {"pattern", "P", "shorthand for --param pattern=P"},
          {"precision", "P", "distance arithmetic: f64 (default, exact) or f32"},
          {"threads", "N",
           "CPU threads of each rank (default: the host's hardware threads shared out among its "
           "ranks)"},
          {"memory-limit", "BYTES", "host memory each rank's join may plan within, e.g. 8G"},
          {"device-memory-limit", "BYTES",
           "GPU memory each rank's join may plan within (each rank takes one GPU of its host: "
           "the host's ranks take its devices in turn)"},
          {"split", "S",
           "how the ranks share a self-join: boxes (each rank the points of its box and their "
           "halo, within eps of it), items (every rank all the points and one share of the join's "
           "work items: --format count only, on an engine that shares them, e.g. cpu-grid, "
           "lbjoin, meta-16q), or auto (default): items for a count where boxes would put more "
           "than half of the points in halos, as 16-D data does, else boxes"},
          {"sample", "N",
           "points in the sample whose neighbour counts place the cuts (default 200000 up to 3-D, 20000 above)"},
          {"output", "FILE", "write the result here (default: no file, counts only)"},
          {"format", "F",
           "csr: the binary neighbour table of docs/formats.md, rows sorted, written by every "
           "rank at once (MPI-IO), the same bytes as 'epsjoin join --sort'; pairs: .npy of (i, j) "
           "sorted by i then j, a self-join's each pair once (i < j), written by every rank at "
           "once; csv: the same pairs as 'i,j' lines; count: neighbour counts, with --output one "
           "line per point in point order. Default from the extension of --output (.npy pairs, "
           ".csv or .txt csv, else csr), count without"},
          {"include-self", "", "also report each point as its own neighbour"},
          {"json", "",
           "print one JSON object (rank 0): n, d, eps, ranks, pairs, engine, the cut "
           "coordinate and cuts, read (ranges or rank 0), per_rank (points, halo, pairs, "
           "join_seconds, rows_seconds, engine, device: the CUDA ordinal a GPU engine runs on, "
           "stages: the join's stages in seconds), "
           "imbalance_seconds and imbalance_pairs ((max - "
           "mean) / mean), halo_points, halo_fraction, exchange_seconds, seconds by stage "
           "(docs/mpi.md)"},
          {"quiet", "", "no summary"},
      },
      ""};
  return spec;
}

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

struct rank_result {
  mpi::rank_rows rows;  // counts empty where only the total was wanted
  std::uint64_t pairs = 0;
  join_stats stats;
  double rows_seconds = 0;  // the rows to global ids and sorted, after the join
};

// Rows to global ids, sorted: each row's place is known from its size, so blocks of rows are
// filled on the rank's threads.
void rows_to_global_ids(const neighbor_table& table, std::span<const std::uint32_t> ids,
                        unsigned threads, rank_result& out) {
  const auto rows_start = clock_type::now();
  const std::size_t n_rows = table.n_queries();
  std::vector<std::uint64_t> starts(n_rows + 1, 0);
  for (std::size_t k = 0; k < n_rows; ++k) {
    out.rows.counts[k] = table.row(k).size();
    starts[k + 1] = starts[k] + out.rows.counts[k];
  }
  out.rows.neighbors.resize(starts[n_rows]);
  auto fill = [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      std::uint32_t* row = out.rows.neighbors.data() + starts[k];
      std::size_t at = 0;
      for (std::uint32_t j : table.row(k)) row[at++] = ids[j];
      std::sort(row, row + at);
    }
  };
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(threads, n_rows));
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) {
    pool.emplace_back(fill, n_rows * w / workers, n_rows * (w + 1) / workers);
  }
  fill(0, n_rows / workers);
  for (std::thread& t : pool) t.join();
  out.rows_seconds = since(rows_start);
}

// The rows of the rank's own points (the first `own` of its points): the self-join of its box
// and halo, each distance computed once, the halo's rows left to their own ranks. With
// `queries` (A x B), the rows of the rank's queries against its box and halo instead. Split by
// work items (options.share set), the rank's share of the counts of the whole self-join.
rank_result join_rank(resources& res, const mpi::rank_points& local,
                      const mpi::rank_points* queries, const join_options& options,
                      bool rows_wanted, bool counts_wanted, unsigned threads) {
  rank_result out;
  const std::size_t n_rows = queries != nullptr ? queries->own : local.own;
  if (rows_wanted || counts_wanted) out.rows.counts.assign(n_rows, 0);
  if (n_rows == 0 || local.points.n() == 0) return out;
  auto run = [&](result_sink& sink) {
    if (queries != nullptr) {
      return join(res, queries->points.view(), local.points.view(), options, sink);
    }
    if (options.share.count > 1) return self_join(res, local.points.view(), options, sink);
    return self_join_rows(res, local.points.view(), local.own, options, sink);
  };
  if (!rows_wanted) {
    // The total alone, unless a counts file wants each row's: a GPU engine then sums on its
    // device instead of bringing every row's count to the host.
    count_sink counter(counts_wanted);
    out.stats = run(counter);
    out.pairs = counter.total();
    for (std::size_t k = 0; k < out.rows.counts.size(); ++k) {
      out.rows.counts[k] = counter.per_point()[k];
    }
    return out;
  }
  csr_sink table_sink(false);
  out.stats = run(table_sink);
  rows_to_global_ids(table_sink.table(), local.ids, threads, out);
  for (std::uint64_t c : out.rows.counts) out.pairs += c;
  return out;
}

// A point's own cost (its index entry, its cell's candidates, its row) in units of one result
// pair, for the partition's work estimate. Measured with cpu-grid on one thread, uniform 2-D and
// 3-D at 50-100 neighbours a point: counting costs 0.15-0.4 us a point and 0.5 ns a pair, so a
// point weighs hundreds of pairs (on exponential 2-D data, 2M points, the count time followed the
// point count alone: 256 left the rank with more points 15% slower); a sorted CSR costs about
// 33 ns a pair, so there the pairs dominate and a point weighs a few.
constexpr double count_point_cost = 1024;
constexpr double csr_point_cost = 4;

double imbalance(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0, most = 0;
  for (double v : values) {
    sum += v;
    most = std::max(most, v);
  }
  const double mean = sum / static_cast<double>(values.size());
  return mean > 0 ? (most - mean) / mean : 0;
}

// --split, checked before any rank reads: auto becomes boxes where items cannot apply.
mpi::rank_split read_split(const parsed_args& args, const join_options& options,
                           const std::string& format, bool ab) {
  const std::string text = args.get("split", "auto");
  if (text != "auto" && text != "boxes" && text != "items") {
    throw usage_error{"--split must be auto, boxes or items, got '" + text + "'"};
  }
  if (text == "boxes") return mpi::rank_split::boxes;
  bool shares = options.engine == "auto";
  std::string sharing;
  for (const engine_info& e : engines()) {
    if (!e.shares_work_items) continue;
    shares |= e.name == options.engine;
    sharing += (sharing.empty() ? "" : ", ") + e.name;
  }
  const char* why = ab                  ? "a self-join (a join A x B is cut into boxes)"
                    : format != "count" ? "--format count (rows and pairs are cut into boxes)"
                    : !shares           ? "an engine that shares its work items"
                                        : nullptr;
  if (text == "auto") return why == nullptr ? mpi::rank_split::automatic : mpi::rank_split::boxes;
  if (why != nullptr) {
    throw usage_error{std::string("--split items needs ") + why +
                      (shares ? "" : "; engines that do: " + sharing)};
  }
  return mpi::rank_split::items;
}

}  // namespace

int run_mpi_join(const parsed_args& args) {
  const auto command_start = clock_type::now();
  join_options options = read_join_options(args);
  const bool ab = args.has("queries") || args.has("generate-queries");
  if (ab && options.include_self) {
    throw usage_error{"--include-self applies to a self-join, not to a join A x B"};
  }
  const std::string output = args.get("output");
  if (args.has("output") && output.empty()) throw usage_error{"--output needs a file name"};
  const std::string format = read_output_format(args, output);
  if ((format == "pairs" || format == "csv") && output.empty()) {
    throw usage_error{"--format " + format + " needs --output FILE"};
  }
  // The ranks write their rows into one file at known offsets: a stream cannot take that.
  if (format != "count" && !output.empty()) {
    if (const output_target target = check_output_path(output); target.kind == output_kind::stream) {
      throw error(output + ": mpi-join's ranks write --format " + format + " into a file at " +
                  "known offsets, which " + target.what + " cannot take: name a file");
    }
  }
  const std::size_t sample_size = args.get_size("sample", 0);  // 0: by the dimension
  if (args.has("sample") && sample_size == 0) throw usage_error{"--sample must be at least 1"};
  const unsigned threads = read_threads(args);
  const std::size_t dim = read_input_dim(args);
  const bool json = args.has("json"), quiet = args.has("quiet");
  const mpi::rank_split split = read_split(args, options, format, ab);

  mpi::session session;
  try {
    const bool root = session.rank() == 0;
    // One GPU a rank: the host's ranks take its devices in turn, and share its cores.
    const std::vector<cuda_device> devices = cuda_devices();
    const int device =
        devices.empty()
            ? 0
            : devices[static_cast<std::size_t>(session.host_rank()) % devices.size()].ordinal;
    const unsigned host_threads = std::max(1u, std::thread::hardware_concurrency());
    resources res(threads != 0
                      ? threads
                      : std::max(1u, host_threads / static_cast<unsigned>(session.host_size())),
                  device);
    res.set_memory({args.get_bytes("memory-limit", 0), args.get_bytes("device-memory-limit", 0)});
    mpi::input_request request;
    request.file = args.get("input");
    request.generate = args.get("generate");
    request.queries_file = args.get("queries");
    request.queries_generate = args.get("generate-queries");
    request.dim = dim;
    request.paper = args.has("paper");
    request.output = output;
    request.eps = options.eps;
    request.sample_size = sample_size;
    request.point_cost = format == "count" ? count_point_cost : csr_point_cost;
    request.split = split;
    const std::optional<mpi::distributed_input> input =
        mpi::distribute_input(session, res, request);
    if (!input) return 1;
    const mpi::rank_points& local = input->local;
    const partition_plan& plan = input->plan;
    const std::size_t n = input->n, d = input->d;
    const double partition_seconds = input->partition_seconds;
    const double exchange_seconds = input->exchange_seconds;

    const bool rows_wanted = format != "count";
    const bool counts_wanted = format == "count" && !output.empty();
    // The CUDA context and GPU buffers are not part of the join's time, as in 'epsjoin join'.
    res.prepare_gpu();
    const mpi::rank_points* queries = input->queries ? &*input->queries : nullptr;
    if (input->by_items) {
      options.share = {static_cast<unsigned>(session.rank()),
                       static_cast<unsigned>(session.size())};
    }
    rank_result mine =
        join_rank(res, local, queries, options, rows_wanted, counts_wanted, res.threads());
    const std::uint64_t my_pairs = mine.pairs;

    const auto write_start = clock_type::now();
    // The rows are the queries' in a join A x B, the own points' in a self-join.
    // Split by items the rows are every point's, in id order: nothing to map.
    const std::span<const std::uint32_t> own_ids =
        queries != nullptr ? std::span<const std::uint32_t>(queries->ids.data(), queries->own)
        : input->by_items  ? std::span<const std::uint32_t>()
                           : std::span<const std::uint32_t>(local.ids.data(), local.own);
    const std::size_t n_rows = queries != nullptr ? input->n_queries : n;
    // Split by items, every rank counted a share of every point's neighbours.
    std::vector<std::uint64_t> counts;
    if (rows_wanted || counts_wanted) {
      counts = input->by_items
                   ? mpi::sum_counts(session, std::move(mine.rows.counts))
                   : mpi::gather_counts(session, mine.rows.counts, own_ids, n_rows);
    }
    if (format == "csr" && !output.empty()) {
      mpi::write_csr_file(session, output, counts, own_ids, mine.rows);
    }
    if (format == "pairs" || format == "csv") {
      mpi::write_pairs_file(session, output, n_rows, own_ids, mine.rows, queries == nullptr,
                            format == "pairs" ? pair_file_format::npy : pair_file_format::csv);
    }
    if (root && format == "count" && !output.empty()) write_counts(output, counts);
    const double write_seconds = since(write_start);

    const std::vector<double> per_rank = mpi::gather_doubles(
        session,
        {static_cast<double>(local.own), static_cast<double>(local.points.n() - local.own),
         static_cast<double>(my_pairs), mine.stats.seconds, exchange_seconds, mine.rows_seconds,
         static_cast<double>(device), static_cast<double>(queries != nullptr ? queries->own : 0)});
    // Each rank's engine and the stages of its join, so that a slow rank says where its time
    // went.
    nlohmann::ordered_json my_join = {{"engine", mine.stats.engine},
                                      {"stages", nlohmann::ordered_json::object()}};
    for (const stage_time& t : mine.stats.stages) my_join["stages"][t.name] = t.seconds;
    const std::vector<std::string> joins = mpi::gather_strings(session, my_join.dump());
    if (!root || quiet) return 0;

    nlohmann::ordered_json report;
    std::uint64_t pairs = 0, halo = 0;
    std::vector<double> join_seconds, rank_pairs;
    double exchange_max = 0, rows_max = 0;
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    std::string engine_used;
    for (int r = 0; r < session.size(); ++r) {
      const double* v = per_rank.data() + 8 * r;
      const auto rank_join = nlohmann::ordered_json::parse(joins[static_cast<std::size_t>(r)]);
      const std::string name = rank_join["engine"].get<std::string>();
      if (engine_used.empty()) engine_used = name;
      ranks.push_back({{"points", static_cast<std::uint64_t>(v[0])},
                       {"halo", static_cast<std::uint64_t>(v[1])},
                       {"pairs", static_cast<std::uint64_t>(v[2])},
                       {"join_seconds", v[3]},
                       {"rows_seconds", v[5]},
                       {"engine", name.empty() ? nullptr : nlohmann::ordered_json(name)},
                       {"device", static_cast<int>(v[6])},
                       {"stages", rank_join["stages"]}});
      if (queries != nullptr) ranks.back()["queries"] = static_cast<std::uint64_t>(v[7]);
      if (input->by_items) {
        ranks.back()["work_share"] = "items " + std::to_string(r) + ", " + std::to_string(r) +
                                     " + " + std::to_string(session.size()) + ", ...";
      }
      halo += static_cast<std::uint64_t>(v[1]);
      pairs += static_cast<std::uint64_t>(v[2]);
      join_seconds.push_back(v[3]);
      rank_pairs.push_back(v[2]);
      exchange_max = std::max(exchange_max, v[4]);
      rows_max = std::max(rows_max, v[5]);
    }
    report["command"] = "mpi-join";
    report["input"] = input->description;
    report["n"] = n;
    if (queries != nullptr) report["n_queries"] = input->n_queries;
    report["d"] = d;
    report["eps"] = options.eps;
    report["ranks"] = session.size();
    report["engine"] = engine_used;
    report["pairs"] = pairs;
    report["format"] = format;
    report["output"] = output.empty() ? nullptr : nlohmann::ordered_json(output);
    report["cut_dimension"] = plan.partition.dim;
    report["cuts"] = plan.partition.splits;
    report["sample_points"] = plan.sample_points;
    report["read"] = input->read_in_ranges ? "ranges" : "rank 0";
    report["split"] = input->by_items ? "items" : "boxes";
    if (split == mpi::rank_split::automatic) {
      report["split_reason"] = "boxes would put " + shortest(input->boxes_halo_fraction) +
                               " of the points in halos: " +
                               (input->by_items ? "work items" : "boxes");
    }
    report["per_rank"] = ranks;
    report["imbalance_seconds"] = imbalance(join_seconds);
    report["imbalance_pairs"] = imbalance(rank_pairs);
    report["halo_points"] = halo;
    report["halo_fraction"] = n > 0 ? static_cast<double>(halo) / static_cast<double>(n) : 0.0;
    report["exchange_seconds"] = exchange_max;
    report["seconds"] = {{"load", input->load_seconds},
                         {"partition", partition_seconds},
                         {"exchange", exchange_max},
                         {"join_max", *std::max_element(join_seconds.begin(), join_seconds.end())},
                         {"rows_max", rows_max},
                         {"write", write_seconds},
                         {"total", since(command_start)}};
    if (json) {
      std::printf("%s\n", report.dump().c_str());
    } else {
      std::printf("mpi-join: %s, N = %s, d = %zu, eps = %s, %d rank%s (%s)\n",
                  input->description.c_str(), grouped(n).c_str(), d, shortest(options.eps).c_str(),
                  session.size(), session.size() == 1 ? "" : "s", engine_used.c_str());
      std::printf(
          "  pairs %s; halo %s points (%.1f%% of N); imbalance %.1f%% (time), %.1f%% (pairs)\n",
          grouped(pairs).c_str(), grouped(halo).c_str(),
          100.0 * report["halo_fraction"].get<double>(),
          100.0 * report["imbalance_seconds"].get<double>(),
          100.0 * report["imbalance_pairs"].get<double>());
      std::printf(
          "  time: partition %s s, exchange %s s, join %s s (slowest rank), write %s s, total %s "
          "s\n",
          duration(partition_seconds).c_str(), duration(exchange_max).c_str(),
          duration(report["seconds"]["join_max"].get<double>()).c_str(),
          duration(write_seconds).c_str(), duration(since(command_start)).c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "epsjoin mpi-join: error (rank %d): %s\n", session.rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}

}  // namespace epsjoin::cli
