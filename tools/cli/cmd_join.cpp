#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "engine_args.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/join.hpp"
#include "input.hpp"
#include "progress.hpp"
#include "summary.hpp"

namespace epsjoin::cli {

const command_spec& join_command() {
  static const command_spec spec{
      "join",
      "join (--input FILE | --generate SPEC) --eps X [options]",
      "Finds all pairs of points within distance eps (squared distance <= eps^2): a self-join of\n"
      "one point set, or with --queries a join A x B of query points A against the input B.\n"
      "Prints a summary (N, d, eps, |R|, selectivity, candidates, time by stage) on stdout.",
      {
          {"input", "FILE",
           "points to join: CSV/whitespace text, .npy (float32/float64), or raw .f64/.f32 "
           "(needs --dim)"},
          {"generate", "SPEC", "generate the points instead, e.g. expo:2:100000 (see 'epsjoin gen')"},
          {"paper", "", "with --generate expo:...: the papers' exact Expo* values"},
          {"queries", "FILE", "query points A for a join A x B against the input B"},
          {"generate-queries", "SPEC", "generate the query points A instead"},
          {"dim", "D", "dimension of raw binary input (.f64/.f32); for other formats a check"},
          {"eps", "X", "the radius (not its square); finite and > 0; required"},
          {"engine", "NAME",
           "engine to run (default auto: the fastest available); 'epsjoin info' lists them"},
          {"param", "KEY=VALUE",
           "engine-specific setting, e.g. pattern=full; unknown keys are errors ('epsjoin info' "
           "lists each engine's, by kind)",
           true},
          {"pattern", "P", "shorthand for --param pattern=P (grid engines: full, unicomp, lid-unicomp)"},
          {"precision", "P", "distance arithmetic: f64 (default, exact) or f32"},
          {"metric", "M",
           "distance: euclidean (default), manhattan, chebyshev, cosine (eps a cosine distance "
           "1 - cos, in [0, 2]) or haversine (columns latitude, longitude; eps in radians, or in "
           "the units of --radius-of-sphere); 'epsjoin info' lists each engine's (docs/metrics.md)"},
          {"angles", "U", "--metric haversine: latitude and longitude in radians (default) or degrees"},
          {"radius-of-sphere", "R",
           "--metric haversine: eps is a distance on a sphere of radius R (e.g. 6371 for km on "
           "Earth): eps / R radians"},
          {"box", "L1,L2,...",
           "periodic box, one side per dimension (scipy's boxsize): coordinates in [0, L), "
           "distances by the minimum image, eps at most L/2 (docs/metrics.md)"},
          {"threads", "N", "CPU threads, at least 1 (default: all hardware threads)"},
          {"devices", "auto|all|LIST",
           "CUDA devices a GPU engine spreads the join over: 'all', ordinals such as 0,1, or "
           "'auto' (the default: every visible device for a counts-only self-join modelled to "
           "take a GPU at least a second, device 0 alone otherwise); the result is the "
           "one-device result (docs/multi-gpu.md)"},
          {"devices-split", "auto|items|slabs",
           "how several devices divide a join: 'items' (counts only, the row-join engines: every "
           "device indexes all the points and counts a share of the work items), 'slabs' (one "
           "slab of the points a device with the points within eps of it, so the data may exceed "
           "one device's memory), 'auto' (the default: items for a self-join's total count, and for "
           "its counts per point (--output) where the slabs would overlap by more than a fifth "
           "of the points; slabs otherwise). A CSR table written to a file (--output FILE) is cut "
           "into runs of the queries instead, one a device, each writing its own part of the "
           "file"},
          {"memory-limit", "BYTES",
           "host memory the join may plan within, e.g. 8G (suffixes K, M, G, T; default: what "
           "the machine and its cgroup allow). cpu-grid and super-ego count their points, index, "
           "counts and row cursors in it and refuse a limit too small for them before the work"},
          {"device-memory-limit", "BYTES",
           "GPU memory the join may plan within, e.g. 20G (default: what the device has free)"},
          {"output", "FILE",
           "write the result here (default: no file, counts only). A file is written beside "
           "itself and renamed into place when complete (a symlink: beside the file it points "
           "at). '-' (standard output; the summary then goes to stderr), a device such as "
           "/dev/null, a FIFO or a socket is written in place, in order; --format pairs cannot "
           "be (its header is written last). A directory is refused before any work"},
          {"format", "F",
           "csr: binary neighbour table (docs/formats.md); pairs: .npy of (i, j) uint32 rows; "
           "csv: 'i,j' lines; count: neighbour counts only (with --output, a .npy of uint64 "
           "counts for a .npy name, else one line per query). Default from the extension of "
           "--output, in any case (.npy pairs, .csv and .txt csv, else csr), count without "
           "--output; a format the extension contradicts (csr into .npy, pairs into .csr, ...) "
           "is refused. A self-join's pair files hold each pair once, i < j. --format csr "
           "without --output builds the table in memory and writes nothing (for benchmarks)."},
          {"include-self", "", "self-join: also report each point as its own neighbour"},
          {"approximate", "",
           "let engines with an approximate mode (ted-join, meta-16q, meta-1q, gds-join with "
           "arithmetic=fp16|fp16-fp32) skip their exactness re-check, as the "
           "papers' code does; the summary's notes give its accuracy against the direct formula. "
           "Exact engines ignore it"},
          {"repeat", "N",
           "run the join N times in this process (fresh result each time) and report the run "
           "with the median time; the GPU context is made before the first run either way. "
           "With --output, every run writes the result: a file or a device such as /dev/null, "
           "not standard output, a FIFO or a socket"},
          {"sort", "", "csr: sort each point's neighbours by id (refused for other formats)"},
          {"json", "", "print the summary as one JSON object (fields engine, n, d, eps, pairs, "
                       "selectivity, candidates, seconds, ...) instead of text; numbers are "
                       "written shortest round-trip (0.1, not 0.10000000000000001), a "
                       "non-finite one as null"},
          {"quiet", "", "no summary and no progress bar"},
      },
      ""};
  return spec;
}

int run_join(const parsed_args& args) {
  const auto command_start = std::chrono::steady_clock::now();
  // Everything that can be checked without the data is checked before loading it.
  join_options options = read_join_options(args);
  read_geometry(args, options);
  const bool self = !args.has("queries") && !args.has("generate-queries");
  options.approximate = args.has("approximate");
  if (options.include_self && !self) throw usage_error{"--include-self applies to self-joins only"};

  const std::string output = args.get("output");
  if (args.has("output") && output.empty()) throw usage_error{"--output needs a file name"};
  const std::string format = read_output_format(args, output);
  if (args.has("sort") && format != "csr") {
    throw usage_error{"--sort orders the rows of a CSR table (--format csr); --format " + format +
                      " has no rows to sort"};
  }
  // A CSR without --output is built in memory and dropped: the benchmarks' end-to-end case.
  if ((format == "pairs" || format == "csv") && output.empty()) {
    throw usage_error{"--format " + format + " needs --output FILE"};
  }
  const bool quiet = args.has("quiet");
  const bool json = args.has("json");
  const std::size_t repeat = args.get_size("repeat", 1);
  if (repeat == 0) throw usage_error{"--repeat must be at least 1"};
  const unsigned threads = read_threads(args);
  const std::size_t dim = read_input_dim(args);
  // Before the input is read and joined: a bad output path should cost nothing.
  const output_target target = output.empty() ? output_target{} : check_output_path(output);
  const bool stream = target.kind == output_kind::stream;
  if (stream && format == "pairs") {
    throw error(output + ": --format pairs is a .npy whose header holds the pair count, known " +
                "only when the join ends, and " + target.what + " cannot go back to it: name " +
                "a file, or use --format csv");
  }
  if (stream && repeat > 1 && target.node != output_node::character_device) {
    throw usage_error{"--repeat " + std::to_string(repeat) + " would write the result " +
                      std::to_string(repeat) + " times into " + target.what + " (" + output +
                      "): use --repeat with a file or a device such as /dev/null"};
  }
  // With the result on standard output, the summary goes to standard error.
  std::FILE* const summary_out = target.standard_output ? stderr : stdout;

  resources res(threads);
  res.set_memory({args.get_bytes("memory-limit", 0), args.get_bytes("device-memory-limit", 0)});
#if defined(__GLIBC__)
  // Under a limit, every block of 1 MiB or more is mapped on its own and unmapped when freed.
  // glibc otherwise serves blocks up to the largest one freed so far from its heap, where a
  // freed array stays resident beside the next phase's: 16 MiB over the join's charged memory
  // at 2M points (bench/RESULTS.md, Outputs and memory limits).
  if (res.memory().host_bytes > 0) (void)::mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  if (const device_choice devices = read_devices(args); !devices.devices.empty()) {
    res.set_devices(devices.devices);
    res.set_devices_automatic(devices.automatic);
  }
  res.set_device_split(read_device_split(args));
  const loaded_points data =
      load_points(args.get("input"), args.get("generate"), dim, args.has("paper"));
  loaded_points queries;
  if (!self) {
    queries = load_points(args.get("queries"), args.get("generate-queries"), dim, args.has("paper"),
                          "--generate-queries");
    if (queries.points.d() != data.points.d()) {
      throw error("the query points (" + queries.description + ") have " +
                  dimensions(queries.points.d()) + " but the input points (" + data.description +
                  ") have " + dimensions(data.points.d()));
    }
  }
  // The CUDA context is not part of a join's time (nor of any GPU library's).
  res.prepare_gpu();

  std::unique_ptr<result_sink> sink;
  csr_sink* csr = nullptr;
  count_sink* counter = nullptr;
  run_report report;
  std::vector<join_stats> runs;
  for (std::size_t run = 0; run < repeat; ++run) {
    if (format == "csr" && !output.empty()) {
      sink.reset();  // the previous run's file is complete before it is written again
      sink = std::make_unique<csr_file_sink>(output, args.has("sort"));
    } else if (format == "csr") {
      sink = std::make_unique<csr_sink>(args.has("sort"));
      csr = static_cast<csr_sink*>(sink.get());
    } else if (format == "count") {
      sink = std::make_unique<count_sink>(!output.empty());
      counter = static_cast<count_sink*>(sink.get());
    } else {
      sink.reset();  // closes the previous run's file before it is written again
      sink = std::make_unique<pair_file_sink>(
          output, format == "pairs" ? pair_file_format::npy : pair_file_format::csv);
    }
    progress_bar bar("joining", !quiet && !json && progress_bar::stderr_is_terminal());
    options.progress = [&bar](double f) { bar.update(f); };
    runs.push_back(self ? self_join(res, data.points.view(), options, *sink)
                        : join(res, queries.points.view(), data.points.view(), options, *sink));
    bar.stop();
  }
  std::vector<double> seconds;
  for (const join_stats& r : runs) seconds.push_back(r.seconds);
  std::vector<std::size_t> by_time(runs.size());
  for (std::size_t i = 0; i < by_time.size(); ++i) by_time[i] = i;
  std::sort(by_time.begin(), by_time.end(),
            [&](std::size_t a, std::size_t b) { return seconds[a] < seconds[b]; });
  report.stats = runs[by_time[by_time.size() / 2]];
  report.run_seconds = seconds;
  report.input = self ? data.description : queries.description + " x " + data.description;
  report.load_seconds = data.seconds + queries.seconds;
  report.format = format;
  report.output = output;

  const auto write_start = std::chrono::steady_clock::now();
  {
    progress_bar writing("writing " + output, !output.empty() && (csr != nullptr || counter) &&
                                                  !quiet && !json && progress_bar::stderr_is_terminal(),
                         false);
    if (csr != nullptr && !output.empty()) write_csr(output, csr->table());
    if (counter != nullptr && !output.empty()) write_counts(output, counter->per_point());
  }
  report.write_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
  report.streamed = format == "pairs" || format == "csv" || (format == "csr" && csr == nullptr);
  report.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - command_start).count();

  if (json) {
    std::fprintf(summary_out, "%s\n", json_summary(report).c_str());
  } else if (!quiet) {
    std::fputs(human_summary(report).c_str(), summary_out);
  }
  return 0;
}

}  // namespace epsjoin::cli
