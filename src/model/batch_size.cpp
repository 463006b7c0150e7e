#include "model/batch_size.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace epsjoin::detail {

double batch_overhead(const batch_model& model, std::uint64_t estimated_pairs,
                      std::uint64_t batch_pairs, const batch_size_limits& limits) {
  batch_pairs = std::max<std::uint64_t>(batch_pairs, 1);
  const std::uint64_t batches = std::max<std::uint64_t>(
      1, (estimated_pairs + batch_pairs - 1) / batch_pairs);
  const std::uint64_t new_pairs =
      batch_pairs > limits.already_allocated ? batch_pairs - limits.already_allocated : 0;
  return limits.n_streams * model.pinned_seconds_per_pair * static_cast<double>(new_pairs) +
         model.batch_overhead_seconds * static_cast<double>(batches);
}

std::uint64_t choose_batch_pairs(const batch_model& model, std::uint64_t estimated_pairs,
                                 const batch_size_limits& limits) {
  const std::uint64_t hi = std::max<std::uint64_t>(limits.max_pairs, 1);
  const std::uint64_t lo = std::min(limits.min_pairs, hi);
  // No point in a buffer larger than the whole (estimated) result.
  const std::uint64_t useful_hi = std::clamp<std::uint64_t>(estimated_pairs, lo, hi);
  // R is convex in b_s apart from the ceiling; its continuous minimum is at
  // sqrt(theta |R| / (n_streams * T2 per pair)). Evaluate it, the buffers already there, and
  // the bounds, and keep the best.
  std::vector<std::uint64_t> candidates = {lo, useful_hi,
                                           std::clamp(limits.already_allocated, lo, useful_hi)};
  if (model.pinned_seconds_per_pair > 0) {
    const double opt = std::sqrt(model.batch_overhead_seconds *
                                 static_cast<double>(estimated_pairs) /
                                 (limits.n_streams * model.pinned_seconds_per_pair));
    candidates.push_back(std::clamp(static_cast<std::uint64_t>(opt), lo, useful_hi));
  }
  std::uint64_t best = useful_hi;
  double best_cost = batch_overhead(model, estimated_pairs, best, limits);
  for (std::uint64_t c : candidates) {
    const double cost = batch_overhead(model, estimated_pairs, c, limits);
    if (cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

namespace {

std::filesystem::path cache_file() {
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::filesystem::path(home) / ".cache";
  } else {
    return {};
  }
  return dir / "epsjoin" / "batch-model.txt";
}

}  // namespace

// One line per device: "<key>\t<pinned seconds per pair>\t<batch overhead seconds>".
bool load_batch_model(const std::string& device_key, batch_model& model) {
  const auto path = cache_file();
  if (path.empty()) return false;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    batch_model m;
    if (std::getline(fields, key, '\t') && key == device_key &&
        fields >> m.pinned_seconds_per_pair >> m.batch_overhead_seconds &&
        m.pinned_seconds_per_pair >= 0 && m.batch_overhead_seconds >= 0) {
      model = m;
      return true;
    }
  }
  return false;
}

void store_batch_model(const std::string& device_key, const batch_model& model) {
  const auto path = cache_file();
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::vector<std::string> kept;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(device_key + "\t", 0) != 0) kept.push_back(line);
    }
  }
  std::ofstream out(path, std::ios::trunc);
  for (const auto& line : kept) out << line << '\n';
  out.precision(6);
  out << device_key << '\t' << std::scientific << model.pinned_seconds_per_pair << '\t'
      << model.batch_overhead_seconds << '\n';
}

}  // namespace epsjoin::detail
