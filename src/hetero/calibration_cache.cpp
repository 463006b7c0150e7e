#include "hetero/calibration_cache.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/expects.hpp"

namespace epsjoin::detail::hetero {

namespace {

constexpr std::uint64_t fnv_offset = 14695981039346656037ull;
constexpr std::uint64_t fnv_prime = 1099511628211ull;

std::uint64_t mix(std::uint64_t hash, const void* bytes, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < n; ++i) hash = (hash ^ p[i]) * fnv_prime;
  return hash;
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::uint64_t data_fingerprint(const dataset_view& points) {
  const std::size_t row_bytes = points.d * (points.type == scalar_type::f64 ? 8 : 4);
  std::uint64_t hash = fnv_offset;
  const std::uint64_t shape[3] = {points.n, points.d, points.type == scalar_type::f64 ? 64u : 32u};
  hash = mix(hash, shape, sizeof shape);
  constexpr std::size_t samples = 4096;
  const std::size_t step = points.n > samples ? points.n / samples : 1;
  const auto* rows = static_cast<const unsigned char*>(points.data);
  for (std::size_t i = 0; i < points.n; i += step)
    hash = mix(hash, rows + i * row_bytes, row_bytes);
  if (points.n > 0) hash = mix(hash, rows + (points.n - 1) * row_bytes, row_bytes);
  return hash;
}

std::string calibration_key(const dataset_view& queries, const dataset_view& data, bool self_join,
                            double reference_eps, scalar_type precision,
                            const std::string& configuration, const std::string& machine) {
  std::ostringstream key;
  key.precision(17);
  key << "data=" << std::hex << data_fingerprint(data);
  if (!self_join) key << " queries=" << data_fingerprint(queries);
  key << std::dec << " n=" << data.n << " d=" << data.d << " ref_eps=" << reference_eps
      << " precision=" << (precision == scalar_type::f64 ? "f64" : "f32")
      << " config=" << configuration << " machine=" << machine;
  return one_line(key.str());
}

std::string default_calibration_path() {
  const char* dir = std::getenv("EPSJOIN_CACHE_DIR");
  std::string base;
  if (dir != nullptr && *dir != '\0') {
    base = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    base = std::string(xdg) + "/epsjoin";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = std::string(home) + "/.cache/epsjoin";
  } else {
    return {};
  }
  return base + "/hegjoin-calibration.txt";
}

std::optional<reference_times> find_calibration(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::optional<reference_times> found;
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string::npos || line.compare(0, tab, key) != 0 || tab != key.size()) continue;
    std::istringstream values(line.substr(tab + 1));
    reference_times t;
    if (values >> t.eps >> t.gpu_seconds >> t.cpu_seconds && t.eps > 0 && t.gpu_seconds > 0 &&
        t.cpu_seconds > 0) {
      found = t;
    }
  }
  return found;
}

std::string store_calibration(const std::string& path, const std::string& key,
                              const reference_times& times) {
  EPSJOIN_EXPECTS(key.find_first_of("\t\n") == std::string::npos,
                  "a calibration key is one line without tabs");
  std::error_code error;
  const std::filesystem::path file(path);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), error);
  if (error) return "cannot create " + file.parent_path().string() + ": " + error.message();
  std::ostringstream line;
  line.precision(17);
  line << key << '\t' << times.eps << ' ' << times.gpu_seconds << ' ' << times.cpu_seconds << '\n';
  // One write of one line in append mode: concurrent writers do not interleave within it.
  std::ofstream out(path, std::ios::app);
  if (!out) return "cannot open " + path + ": " + std::strerror(errno);
  out << line.str();
  out.flush();
  if (!out) return "cannot write " + path + ": " + std::strerror(errno);
  return {};
}

}  // namespace epsjoin::detail::hetero
