#include "engine_args.hpp"

#include <algorithm>
#include <thread>

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

scalar_type read_precision(const parsed_args& args) {
  const std::string precision = args.get("precision", "f64");
  if (precision != "f64" && precision != "f32") {
    throw usage_error{"--precision must be f64 or f32, got '" + precision + "'"};
  }
  return precision == "f64" ? scalar_type::f64 : scalar_type::f32;
}

}  // namespace epsjoin::cli
