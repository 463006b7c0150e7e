#include "engine_args.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "epsjoin/build_info.hpp"
#include "epsjoin/error.hpp"
#include "epsjoin/join.hpp"

namespace epsjoin::cli {

std::string read_engine(const parsed_args& args) {
  const std::string name = args.get("engine", "auto");
  if (name == "auto") return name;
  std::string known = "auto";
  for (const engine_info& e : engines()) {
    if (e.name == name) return name;
    known += ", " + e.name;
  }
  throw usage_error{"unknown engine '" + name + "'; known engines: " + known};
}

std::map<std::string, std::string> read_engine_params(const parsed_args& args) {
  std::map<std::string, std::string> params;
  for (const std::string& kv : args.all("param")) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw usage_error{"--param expects KEY=VALUE, got '" + kv + "'"};
    params[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (args.has("pattern")) params["pattern"] = args.get("pattern");
  return params;
}

unsigned read_threads(const parsed_args& args) {
  const std::size_t threads = args.get_size("threads", 0);
  if (args.has("threads") && threads == 0) {
    throw usage_error{"--threads must be at least 1 (leave it out for every hardware thread)"};
  }
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t most = std::min<std::size_t>(4096, 64 * hardware);
  if (threads > most) {
    throw usage_error{"--threads " + args.get("threads") +
                      " is more than this machine can use (at most " + std::to_string(most) +
                      ": 64 per hardware thread, " + std::to_string(hardware) +
                      " here, and never over 4096)"};
  }
  return static_cast<unsigned>(threads);
}

device_choice read_devices(const parsed_args& args) {
  const std::string text = args.has("devices") ? args.get("devices") : "auto";
  std::vector<int> devices;
  if (text == "all" || text == "auto") {
    for (const cuda_device& device : cuda_devices()) devices.push_back(device.ordinal);
    if (text == "auto") return {devices, true};  // none visible: device 0, as without a GPU
    if (devices.empty()) {
      throw usage_error{"--devices all: no CUDA device is visible ('epsjoin info' lists them)"};
    }
    return {devices, false};
  }
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    char* stop = nullptr;
    const long ordinal = std::strtol(item.c_str(), &stop, 10);
    if (item.empty() || *stop != '\0' || ordinal < 0 || ordinal > 1023 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw usage_error{"--devices must be 'auto', 'all' or a list of CUDA ordinals such as 0,1; "
                        "got '" +
                        text + "'"};
    }
    if (std::find(devices.begin(), devices.end(), ordinal) != devices.end()) {
      throw usage_error{"--devices lists device " + item + " twice"};
    }
    devices.push_back(static_cast<int>(ordinal));
    begin = end + 1;
  }
  return {devices, false};
}

namespace {

// The lower-cased extension of the output's file name, without the dot ("" when it has none).
std::string output_extension(const std::string& output) {
  const std::size_t slash = output.find_last_of('/');
  const std::size_t dot = output.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = output.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// The pair format an extension names, or "" for a name that names none.
std::string format_of_extension(const std::string& ext) {
  if (ext == "npy") return "pairs";
  if (ext == "csv" || ext == "txt") return "csv";
  if (ext == "csr") return "csr";
  return "";
}

}  // namespace

std::string default_output_format(const std::string& output) {
  if (output.empty()) return "count";
  const std::string named = format_of_extension(output_extension(output));
  return named.empty() ? "csr" : named;
}

std::string read_output_format(const parsed_args& args, const std::string& output) {
  const std::string format = args.get("format", default_output_format(output));
  if (format != "csr" && format != "pairs" && format != "csv" && format != "count") {
    throw usage_error{"--format must be csr, pairs, csv or count, got '" + format + "'"};
  }
  const std::string ext = output_extension(output);
  const std::string named = format_of_extension(ext);
  // Counts are written as the extension says: a .npy of uint64, or text lines.
  const bool counts_fit = format == "count" && (named == "pairs" || named == "csv");
  if (!named.empty() && format != named && !counts_fit) {
    throw usage_error{"--format " + format + " contradicts --output " + output + ": a ." + ext +
                      " file holds " +
                      (named == "csr"     ? std::string("a CSR table (--format csr)")
                       : named == "pairs" ? std::string("pairs (--format pairs) or counts")
                                          : std::string("pairs as text (--format csv) or counts")) +
                      "; change the format or the file name"};
  }
  return format;
}

device_split read_device_split(const parsed_args& args) {
  const std::string text = args.has("devices-split") ? args.get("devices-split") : "auto";
  if (const std::optional<device_split> split = device_split_named(text)) return *split;
  throw usage_error{"--devices-split must be auto, items or slabs; got '" + text + "'"};
}

join_options read_join_options(const parsed_args& args) {
  if (args.has("input") == args.has("generate")) {
    throw usage_error{"give exactly one of --input FILE and --generate SPEC"};
  }
  if (args.has("queries") && args.has("generate-queries")) {
    throw usage_error{"give at most one of --queries and --generate-queries"};
  }
  if (!args.has("eps")) throw usage_error{"missing --eps X"};
  join_options options;
  options.eps = read_radius(args, "eps");
  options.engine = read_engine(args);
  options.params = read_engine_params(args);
  options.precision = read_precision(args);
  options.include_self = args.has("include-self");
  return options;
}

scalar_type read_precision(const parsed_args& args) {
  const std::string precision = args.get("precision", "f64");
  if (precision != "f64" && precision != "f32") {
    throw usage_error{"--precision must be f64 or f32, got '" + precision + "'"};
  }
  return precision == "f64" ? scalar_type::f64 : scalar_type::f32;
}

}  // namespace epsjoin::cli

namespace epsjoin::cli {

double read_radius(const parsed_args& args, const std::string& name) {
  const double value = args.get_double(name, 0);
  if (!(std::isfinite(value) && value > 0)) {
    throw usage_error{"--" + name + " must be a finite number > 0, got '" + args.get(name) + "'"};
  }
  return value;
}

distance_metric read_metric(const parsed_args& args) {
  const std::string metric = args.get("metric", "euclidean");
  const auto m = parse_metric(metric);
  if (!m) {
    throw usage_error{"--metric must be euclidean, manhattan, chebyshev, cosine or haversine, got '" +
                      metric + "'"};
  }
  return *m;
}

void read_geometry(const parsed_args& args, join_options& options) {
  options.metric = read_metric(args);
  const bool haversine = options.metric == distance_metric::haversine;
  if (args.has("angles")) {
    const std::string unit = args.get("angles");
    if (unit != "degrees" && unit != "radians") {
      throw usage_error{"--angles must be degrees or radians, got '" + unit + "'"};
    }
    if (!haversine) throw usage_error{"--angles applies to --metric haversine only"};
    options.angles = unit == "degrees" ? angle_unit::degrees : angle_unit::radians;
  }
  if (args.has("radius-of-sphere")) {
    if (!haversine) throw usage_error{"--radius-of-sphere applies to --metric haversine only"};
    options.sphere_radius = args.get_double("radius-of-sphere", 0);
    if (!(std::isfinite(options.sphere_radius) && options.sphere_radius > 0)) {
      throw usage_error{"--radius-of-sphere must be a finite number > 0, got '" +
                        args.get("radius-of-sphere") + "'"};
    }
  }
  if (args.has("box")) {
    const std::string text = args.get("box");
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      const std::string part = text.substr(start, comma - start);
      char* end = nullptr;
      const double side = std::strtod(part.c_str(), &end);
      if (part.empty() || end != part.c_str() + part.size() || !std::isfinite(side) || side <= 0) {
        throw usage_error{"--box takes side lengths > 0 separated by commas (one per dimension, "
                          "e.g. 10,10,10), got '" + text + "'"};
      }
      options.box.push_back(side);
      start = comma + 1;
    }
  }
}

}  // namespace epsjoin::cli
