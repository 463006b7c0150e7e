#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cluster_command.hpp"
#include "commands.hpp"
#include "engine_args.hpp"
#include "epsjoin/dbscan.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "input.hpp"
#include "progress.hpp"
#include "summary.hpp"

namespace epsjoin::cli {

const command_spec& dbscan_command() {
  static const command_spec spec{
      "dbscan",
      "dbscan (--input FILE | --generate SPEC) --eps X --min-samples M [options]",
      "Clusters the points with DBSCAN on the eps-join, without storing any neighbourhood: a\n"
      "point with at least M points within eps (itself included, as scikit-learn counts) is a\n"
      "core point; core points within eps of each other share a cluster; a non-core point with\n"
      "a core point within eps joins the cluster of its core neighbour of smallest index; the\n"
      "rest is noise (label -1). Clusters are numbered in the order of their first core\n"
      "point, as scikit-learn numbers them.\n"
      "Prints a summary (clusters, core, border and noise points, time by stage) on stdout.",
      {
          {"input", "FILE",
           "points to cluster: CSV/whitespace text, .npy (float32/float64), or raw .f64/.f32 "
           "(needs --dim)"},
          {"generate", "SPEC", "generate the points instead, e.g. gauss:2:100000 (see 'epsjoin gen')"},
          {"paper", "", "with --generate expo:...: the papers' exact Expo* values"},
          {"dim", "D", "dimension of raw binary input (.f64/.f32); for other formats a check"},
          {"eps", "X", "the radius (not its square); finite and > 0; required"},
          {"min-samples", "M",
           "points within eps, the point itself included, that make a core point; >= 1; "
           "required"},
          {"sample-weight", "FILE",
           "a weight for each point, in the points' order (scikit-learn's sample_weight): a point "
           "is core when the weights within eps, its own included, sum to at least M; one number "
           "a line, .npy of shape (N, 1), or raw .f64/.f32; finite, negative allowed"},
          {"engine", "NAME",
           "engine of the joins (default auto: the fastest available); 'epsjoin info' lists them"},
          {"param", "KEY=VALUE", "engine-specific setting, as for 'epsjoin join'", true},
          {"pattern", "P", "shorthand for --param pattern=P (grid engines)"},
          {"precision", "P", "distance arithmetic: f64 (default, exact) or f32"},
          {"merge", "WHERE",
           "device (default: lbjoin, gds-join, ted-join, meta-16q and meta-1q link each pair "
           "into a union-find on the GPU as their second pass finds it, storing no pair; cpu-grid in 1-3 dimensions clusters on its own cells of "
           "side eps/sqrt(d) with no pair join; other engines merge on the host) or host (every "
           "engine joins twice and merges its pairs on the host; the same labels)"},
          {"threads", "N", "CPU threads, at least 1 (default: all hardware threads)"},
          {"memory-limit", "BYTES",
           "host memory the joins and the labels may use, e.g. 8G (suffixes K, M, G, T; "
           "default: what the machine and its cgroup allow)"},
          {"device-memory-limit", "BYTES",
           "GPU memory the joins may plan within (default: what the device has free)"},
          {"repeat", "N",
           "cluster N times in this process and report the run with the median time (the JSON's "
           "run_seconds lists every run's, the first, which loads the GPU kernels, first)"},
          {"output", "FILE",
           "write the labels here: .npy gives int64 of shape (N,) (-1 for noise), like "
           "scikit-learn's labels_; any other name one decimal label a line"},
          {"json", "", "print the summary as one JSON object (fields engine, merge, n, d, eps, "
                       "min_samples, clusters, core, border, noise, pairs (0 where merge is "
                       "cells), seconds, stages, ...) instead of text"},
          {"quiet", "", "no summary and no progress bar"},
      },
      ""};
  return spec;
}

namespace {

struct dbscan_report {
  dbscan_result result;
  std::string input;
  std::string output;
  std::size_t n = 0, d = 0, min_samples = 0;
  double eps = 0;
  unsigned threads = 0;
  scalar_type precision = scalar_type::f64;
  double load_seconds = 0, write_seconds = 0, total_seconds = 0;
  std::vector<double> run_seconds;  // every run's clustering time (--repeat); result: the median
};

std::string human(const dbscan_report& r) {
  const dbscan_result& c = r.result;
  std::ostringstream out;
  out << "epsjoin: dbscan with engine " << (c.engine.empty() ? "(none: no join needed)" : c.engine)
      << (c.merge.empty() ? "" : c.merge == "cells" ? ", merged on its " : ", merged on the ")
      << c.merge << ", " << r.threads << " CPU thread" << (r.threads == 1 ? "" : "s") << "\n";
  out << "  input       " << r.input << "\n";
  out << "  points      N = " << grouped(r.n) << ", d = " << r.d << ", eps = " << shortest(r.eps)
      << ", min_samples = " << r.min_samples << ", computed in " << to_string(r.precision) << "\n";
  out << "  clusters    " << grouped(c.n_clusters) << "\n";
  out << "  points      " << grouped(c.n_core) << " core, " << grouped(c.n_border) << " border, "
      << grouped(c.n_noise) << " noise\n";
  if (c.merge == "cells") {
    out << "  pairs       not counted (the counts stop at min_samples)\n";
  } else {
    out << "  pairs       " << grouped(c.pairs) << " excl. self (" << grouped(c.pairs / 2)
        << " unique)\n";
  }
  out << "  time        dbscan " << duration(c.seconds) << " s";
  if (r.run_seconds.size() > 1) out << " (median of " << r.run_seconds.size() << " runs)";
  for (const stage_time& st : c.stages) {
    out << ", " << st.name << " " << duration(st.seconds) << " s";
  }
  out << "\n              input " << duration(r.load_seconds) << " s";
  if (!r.output.empty()) out << ", writing " << duration(r.write_seconds) << " s";
  out << "; total " << duration(r.total_seconds) << " s\n";
  if (!r.output.empty()) out << "  output      " << r.output << " (labels)\n";
  return out.str();
}

std::string json(const dbscan_report& r) {
  const dbscan_result& c = r.result;
  std::ostringstream out;
  out << "{\"engine\":" << json_string(c.engine) << ",\"merge\":" << json_string(c.merge)
      << ",\"n\":" << r.n << ",\"d\":" << r.d
      << ",\"eps\":" << json_number(r.eps) << ",\"min_samples\":" << r.min_samples
      << ",\"precision\":" << json_string(std::string(to_string(r.precision)))
      << ",\"threads\":" << r.threads << ",\"clusters\":" << c.n_clusters
      << ",\"core\":" << c.n_core << ",\"border\":" << c.n_border << ",\"noise\":" << c.n_noise
      << ",\"pairs\":" << c.pairs << ",\"seconds\":" << json_number(c.seconds)
      << ",\"load_seconds\":" << json_number(r.load_seconds)
      << ",\"write_seconds\":" << json_number(r.write_seconds)
      << ",\"total_seconds\":" << json_number(r.total_seconds);
  if (r.run_seconds.size() > 1) {
    out << ",\"run_seconds\":[";
    for (std::size_t i = 0; i < r.run_seconds.size(); ++i) {
      out << (i ? "," : "") << json_number(r.run_seconds[i]);
    }
    out << "]";
  }
  out << ",\"stages\":{";
  for (std::size_t i = 0; i < c.stages.size(); ++i) {
    out << (i ? "," : "") << json_string(c.stages[i].name) << ":" << json_number(c.stages[i].seconds);
  }
  out << "},\"notes\":{";
  for (std::size_t i = 0; i < c.notes.size(); ++i) {
    out << (i ? "," : "") << json_string(c.notes[i].first) << ":" << json_string(c.notes[i].second);
  }
  out << "},\"input\":" << json_string(r.input) << ",\"output\":" << json_string(r.output) << "}";
  return out.str();
}

// The --sample-weight file: one value per point, read as a point set of dimension 1 (its readers'
// checks and messages: finite values, a whole file).
std::vector<double> read_weights(const std::string& path, std::size_t n) {
  if (path.empty()) throw usage_error{"--sample-weight needs a file name"};
  read_options one_value;
  one_value.dim = 1;
  const dataset file = read_dataset(path, one_value);
  if (file.n() != n) {
    throw usage_error{"--sample-weight: " + path + " holds " + std::to_string(file.n()) +
                      " weights for " + std::to_string(n) + " points"};
  }
  const dataset_view weights = file.view();
  std::vector<double> widened(n);
  for (std::size_t i = 0; i < n; ++i) widened[i] = weights.at(i, 0);
  return widened;
}

// The clustering `repeat` times on one resources (its buffers and loaded kernels kept, as a
// program that clusters again keeps them): the median run's result, every run's time. Every
// run gives the same labels; only the last run's are kept, so the peak is one run's.
dbscan_result cluster_repeatedly(resources& res, dataset_view points, dbscan_report& report,
                                 dbscan_options& options, std::size_t repeat, bool show_progress) {
  std::vector<dbscan_result> runs;
  for (std::size_t run = 0; run < repeat; ++run) {
    if (!runs.empty()) {  // freed, not only emptied
      std::vector<std::int64_t>().swap(runs.back().labels);
      std::vector<std::uint8_t>().swap(runs.back().core);
    }
    progress_bar bar("clustering", show_progress && progress_bar::stderr_is_terminal());
    options.progress = [&bar](double f) { bar.update(f); };
    runs.push_back(dbscan(res, points, report.eps, report.min_samples, options));
    report.run_seconds.push_back(runs.back().seconds);
  }
  std::vector<std::size_t> by_time(runs.size());
  for (std::size_t i = 0; i < by_time.size(); ++i) by_time[i] = i;
  std::sort(by_time.begin(), by_time.end(),
            [&](std::size_t a, std::size_t b) { return runs[a].seconds < runs[b].seconds; });
  dbscan_result median = std::move(runs[by_time[by_time.size() / 2]]);
  if (median.labels.empty()) {
    median.labels = std::move(runs.back().labels);
    median.core = std::move(runs.back().core);
  }
  return median;
}

}  // namespace

int run_dbscan(const parsed_args& args) {
  // Everything that can be checked without the data is checked before loading it.
  const cluster_command command(args, "eps");
  dbscan_report report;
  report.eps = read_radius(args, "eps");
  report.min_samples = command.min_samples();
  dbscan_options options;
  options.engine = read_engine(args);
  options.params = read_engine_params(args);
  options.precision = read_precision(args);
  if (args.has("merge")) {
    const std::string where = args.get("merge");
    if (where != "device" && where != "host") {
      throw usage_error{"--merge must be device or host, got '" + where + "'"};
    }
    options.device_merge = where == "device";
    options.cell_merge = where == "device";
  }
  report.output = command.output();
  const std::size_t repeat = args.get_size("repeat", 1);
  if (repeat == 0) throw usage_error{"--repeat must be at least 1"};

  resources res = command.make_resources();
  const loaded_points data = command.load();
  std::vector<double> weights;
  if (args.has("sample-weight")) weights = read_weights(args.get("sample-weight"), data.points.n());
  options.sample_weight = weights;
  res.prepare_gpu();  // the CUDA context is not part of the clustering's time

  report.result = cluster_repeatedly(res, data.points.view(), report, options, repeat,
                                     command.chatty());
  report.input = data.description;
  report.n = data.points.n();
  report.d = data.points.d();
  report.threads = res.threads();
  report.precision = options.precision;
  report.load_seconds = data.seconds;

  const auto write_start = std::chrono::steady_clock::now();
  if (!report.output.empty()) write_labels(report.output, report.result.labels);
  report.write_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
  report.total_seconds = command.seconds_since_start();
  command.print_summary(json(report), human(report));
  return 0;
}

}  // namespace epsjoin::cli
