#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cluster_command.hpp"
#include "commands.hpp"
#include "engine_args.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/io.hpp"
#include "epsjoin/optics.hpp"
#include "input.hpp"
#include "progress.hpp"
#include "summary.hpp"

namespace epsjoin::cli {

const command_spec& optics_command() {
  static const command_spec spec{
      "optics",
      "optics (--input FILE | --generate SPEC) --max-eps X --min-samples M [options]",
      "Orders the points by OPTICS on one eps-join at max_eps, as scikit-learn's OPTICS orders\n"
      "them: each point's core distance is the distance of its M-th nearest point within\n"
      "max_eps (itself the first), and the next point is always the unprocessed one of\n"
      "smallest reachability (ties: smallest index). With --cluster-eps, DBSCAN's clusters at\n"
      "that radius are read off the ordering (scikit-learn's cluster_optics_dbscan); the xi\n"
      "method is in Python's epsjoin.OPTICS.\n"
      "Prints a summary on stdout.",
      {
          {"input", "FILE",
           "points: CSV/whitespace text, .npy (float32/float64), or raw .f64/.f32 (needs --dim)"},
          {"generate", "SPEC",
           "generate the points instead, e.g. gauss:2:100000 (see 'epsjoin gen')"},
          {"paper", "", "with --generate expo:...: the papers' exact Expo* values"},
          {"dim", "D", "dimension of raw binary input (.f64/.f32); for other formats a check"},
          {"max-eps", "X",
           "the largest radius considered (not its square); finite and > 0; required"},
          {"min-samples", "M",
           "points within a point's neighbourhood, itself included, that make it core; >= 1; "
           "required"},
          {"cluster-eps", "X",
           "also label DBSCAN's clusters at this radius (<= --max-eps): a label column in "
           "--output and a cluster count in the summary"},
          {"metric", "NAME",
           "euclidean (default), manhattan, chebyshev, cosine or haversine (radians)"},
          {"engine", "NAME",
           "engine of the join (default auto: the fastest available); 'epsjoin info' lists them"},
          {"param", "KEY=VALUE", "engine-specific setting, as for 'epsjoin join'", true},
          {"precision", "P", "distance arithmetic: f64 (default, exact) or f32"},
          {"threads", "N", "CPU threads, at least 1 (default: all hardware threads)"},
          {"memory-limit", "BYTES",
           "host memory the join's neighbour table (4 bytes a pair) and the ordering may use, "
           "e.g. 8G (default: what the machine and its cgroup allow)"},
          {"device-memory-limit", "BYTES",
           "GPU memory the join may plan within (default: what the device has free)"},
          {"output", "FILE",
           "write the plot as CSV: a header, then one line per point in OPTICS order, "
           "point,reachability,core_distance,predecessor[,label] ('inf' where infinite, -1 for "
           "no predecessor); complete or absent"},
          {"json", "", "print the summary as one JSON object instead of text"},
          {"quiet", "", "no summary and no progress bar"},
      },
      ""};
  return spec;
}

namespace {

struct optics_report {
  optics_result result;
  std::vector<std::int64_t> labels;
  std::string input, output;
  std::size_t n = 0, d = 0, min_samples = 0;
  double max_eps = 0, cluster_eps = 0;
  unsigned threads = 0;
  double load_seconds = 0, write_seconds = 0, total_seconds = 0;
};

std::size_t count_clusters(const std::vector<std::int64_t>& labels) {
  std::int64_t top = -1;
  for (const std::int64_t l : labels) top = std::max(top, l);
  return static_cast<std::size_t>(top + 1);
}

std::size_t count_starts(const optics_result& r) {
  std::size_t starts = 0;
  for (const double reach : r.reachability) starts += std::isinf(reach);
  return starts;
}

std::string human(const optics_report& r) {
  const optics_result& o = r.result;
  std::ostringstream out;
  out << "epsjoin: optics with engine " << o.engine << ", " << r.threads << " CPU thread"
      << (r.threads == 1 ? "" : "s") << "\n";
  out << "  input       " << r.input << "\n";
  out << "  points      N = " << grouped(r.n) << ", d = " << r.d
      << ", max_eps = " << shortest(r.max_eps) << ", min_samples = " << r.min_samples << "\n";
  out << "  pairs       " << grouped(o.pairs) << " within max_eps, excl. self\n";
  out << "  ordering    " << grouped(count_starts(o)) << " starts (reachability inf)\n";
  if (!r.labels.empty()) {
    out << "  clusters    " << grouped(count_clusters(r.labels)) << " at eps "
        << shortest(r.cluster_eps) << "\n";
  }
  out << "  time        optics " << duration(o.seconds) << " s";
  for (const stage_time& st : o.stages)
    out << ", " << st.name << " " << duration(st.seconds) << " s";
  out << "\n              input " << duration(r.load_seconds) << " s";
  if (!r.output.empty()) out << ", writing " << duration(r.write_seconds) << " s";
  out << "; total " << duration(r.total_seconds) << " s\n";
  if (!r.output.empty()) out << "  output      " << r.output << " (reachability plot)\n";
  return out.str();
}

std::string json(const optics_report& r) {
  const optics_result& o = r.result;
  std::ostringstream out;
  out << "{\"engine\":" << json_string(o.engine) << ",\"n\":" << r.n << ",\"d\":" << r.d
      << ",\"max_eps\":" << json_number(r.max_eps) << ",\"min_samples\":" << r.min_samples
      << ",\"threads\":" << r.threads << ",\"pairs\":" << o.pairs
      << ",\"starts\":" << count_starts(o);
  if (!r.labels.empty()) {
    out << ",\"cluster_eps\":" << json_number(r.cluster_eps)
        << ",\"clusters\":" << count_clusters(r.labels);
  }
  out << ",\"seconds\":" << json_number(o.seconds)
      << ",\"load_seconds\":" << json_number(r.load_seconds)
      << ",\"write_seconds\":" << json_number(r.write_seconds)
      << ",\"total_seconds\":" << json_number(r.total_seconds) << ",\"stages\":{";
  for (std::size_t i = 0; i < o.stages.size(); ++i) {
    out << (i ? "," : "") << json_string(o.stages[i].name) << ":"
        << json_number(o.stages[i].seconds);
  }
  out << "},\"input\":" << json_string(r.input) << ",\"output\":" << json_string(r.output) << "}";
  return out.str();
}

}  // namespace

int run_optics(const parsed_args& args) {
  const cluster_command command(args, "max-eps");
  optics_report report;
  report.max_eps = read_radius(args, "max-eps");
  if (args.has("cluster-eps")) {
    report.cluster_eps = read_radius(args, "cluster-eps");
    if (report.cluster_eps > report.max_eps) {
      throw usage_error{"--cluster-eps must be at most --max-eps"};
    }
  }
  report.min_samples = command.min_samples();
  optics_options options;
  options.engine = read_engine(args);
  options.params = read_engine_params(args);
  options.precision = read_precision(args);
  options.metric = read_metric(args);
  report.output = command.output();

  resources res = command.make_resources();
  const loaded_points data = command.load();
  res.prepare_gpu();
  {
    progress_bar bar("ordering", command.chatty() && progress_bar::stderr_is_terminal());
    options.progress = [&bar](double f) { bar.update(f); };
    report.result = optics(res, data.points.view(), report.max_eps, report.min_samples, options);
  }
  if (args.has("cluster-eps"))
    report.labels = optics_dbscan_labels(report.result, report.cluster_eps);
  report.input = data.description;
  report.n = data.points.n();
  report.d = data.points.d();
  report.threads = res.threads();
  report.load_seconds = data.seconds;

  const auto write_start = std::chrono::steady_clock::now();
  if (!report.output.empty()) {
    const optics_result& o = report.result;
    write_optics(report.output, o.ordering, o.reachability, o.core_distances, o.predecessor,
                 report.labels);
  }
  report.write_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count();
  report.total_seconds = command.seconds_since_start();
  command.print_summary(json(report), human(report));
  return 0;
}

}  // namespace epsjoin::cli
