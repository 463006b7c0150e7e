// Benchmarks of the eps-grid and cpu-grid.
//
//   grid_bench join   [--dist expo|uniform] [--d 2] [--n 1e6] [--eps E | --sel S]
//                     [--threads 1,2] [--sink count|null|csr] [--reps 3] [key=value ...]
//   grid_bench lookup [--dist ..] [--d ..] [--n ..] [--eps E | --sel S] [--threads 1]
//   grid_bench sort   [--n 1e7] [--bits 26] [--threads 1,2,4]
//
// join: one line per run with the stage split (index / plan / execute), |R|, S, candidates and
// candidates per second; key=value pairs go to the engine's params. --sel finds eps by bisection
// on a counting run. lookup: neighbour-cell lookup methods over every cell of the index.
// sort: the parallel radix sort against std::sort and std::stable_sort of the same pairs.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/parallel.hpp"
#include "base/timer.hpp"
#include "cpu/grid_schedule.hpp"
#include "epsjoin/join.hpp"
#include "grid/host_index.hpp"
#include "grid/plan.hpp"
#include "grid/radix_sort.hpp"

using namespace epsjoin;
namespace grid = epsjoin::detail::grid;
namespace cpu = epsjoin::detail::cpu;

namespace {

struct args {
  std::string mode = "join", dist = "expo", sink = "count";
  std::size_t d = 2, n = 1000000;
  double eps = 0, sel = 100;
  int bits = 26, reps = 3;
  std::vector<unsigned> threads = {1, 2};
  std::map<std::string, std::string> params;
};

std::vector<unsigned> parse_list(const char* s) {
  std::vector<unsigned> out;
  for (const char* p = s; *p;) {
    out.push_back(static_cast<unsigned>(std::strtoul(p, const_cast<char**>(&p), 10)));
    if (*p == ',') ++p;
  }
  return out;
}

args parse(int argc, char** argv) {
  args a;
  int i = 1;
  if (argc > 1 && argv[1][0] != '-') a.mode = argv[i++];
  for (; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&] { return i + 1 < argc ? argv[++i] : ""; };
    if (k == "--dist") a.dist = next();
    else if (k == "--d") a.d = std::strtoul(next(), nullptr, 10);
    else if (k == "--n") a.n = static_cast<std::size_t>(std::strtod(next(), nullptr));
    else if (k == "--eps") a.eps = std::strtod(next(), nullptr);
    else if (k == "--sel") a.sel = std::strtod(next(), nullptr);
    else if (k == "--threads") a.threads = parse_list(next());
    else if (k == "--sink") a.sink = next();
    else if (k == "--bits") a.bits = std::atoi(next());
    else if (k == "--reps") a.reps = std::atoi(next());
    else if (auto eq = k.find('='); eq != std::string::npos) a.params[k.substr(0, eq)] = k.substr(eq + 1);
    else std::fprintf(stderr, "ignored argument %s\n", k.c_str());
  }
  return a;
}

// The papers' synthetic sets: uniform in [0, 1]^d, or exponential(40) redrawn outside [0, 1].
dataset make_points(const std::string& dist, std::size_t n, std::size_t d) {
  std::vector<double> v(n * d);
  detail::parallel_for(16, n, 1 << 16, [&](std::size_t begin, std::size_t end, unsigned) {
    std::mt19937_64 rng(2137834274ull + begin);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::exponential_distribution<double> e(40.0);
    for (std::size_t k = begin * d; k < end * d; ++k) {
      if (dist == "uniform") {
        v[k] = u(rng);
      } else {
        do v[k] = e(rng);
        while (v[k] > 1.0);
      }
    }
  });
  return dataset(std::move(v), d);
}

// Receives pairs and drops them: what emission costs without a sink's own work.
class null_sink final : public result_sink {
 public:
  void consume(std::span<const index_pair> pairs) override { n_ += pairs.size(); }
  std::uint64_t n_ = 0;
};

join_stats run_once(const args& a, const dataset& pts, double eps, unsigned threads,
                    const std::string& sink_kind) {
  resources res(threads);
  join_options opt;
  opt.eps = eps;
  opt.engine = a.params.count("engine") ? a.params.at("engine") : "cpu-grid";
  opt.params = a.params;
  opt.params.erase("engine");
  if (opt.params.count("precision")) {
    opt.precision = opt.params.at("precision") == "f32" ? scalar_type::f32 : scalar_type::f64;
    opt.params.erase("precision");
  }
  if (sink_kind == "null") {
    null_sink s;
    return self_join(res, pts.view(), opt, s);
  }
  if (sink_kind == "csr") {
    csr_sink s;
    return self_join(res, pts.view(), opt, s);
  }
  count_sink s(false);
  return self_join(res, pts.view(), opt, s);
}

double find_eps(const args& a, const dataset& pts) {
  // S grows about like eps^d: a few Newton steps on log S against log eps, on counting runs,
  // until S is within 1% of the target.
  args b = a;
  b.params = {};
  double eps = 0.01;
  for (int it = 0; it < 12; ++it) {
    const double s = run_once(b, pts, eps, std::thread::hardware_concurrency(), "count").selectivity();
    if (std::fabs(s / a.sel - 1.0) < 0.01) break;
    eps *= s <= 0 ? 10.0 : std::pow(a.sel / s, 1.0 / static_cast<double>(a.d));
  }
  return eps;
}

double stage(const join_stats& s, const char* name) {
  for (const auto& st : s.stages) {
    if (st.name == name) return st.seconds;
  }
  return 0;
}

int bench_join(const args& a) {
  const dataset pts = make_points(a.dist, a.n, a.d);
  const double eps = a.eps > 0 ? a.eps : find_eps(a, pts);
  std::string params;
  for (const auto& [k, v] : a.params) params += k + "=" + v + " ";
  for (unsigned t : a.threads) {
    join_stats best;
    best.seconds = 1e300;
    for (int r = 0; r < a.reps; ++r) {
      join_stats s = run_once(a, pts, eps, t, a.sink);
      if (s.seconds < best.seconds) best = s;
    }
    std::printf("%s %s%zuD n=%zu eps=%.6g threads=%u sink=%s %s| |R|=%llu S=%.2f cand=%llu "
                "total=%.4fs index=%.4fs plan=%.4fs execute=%.4fs cand/s=%.3g (execute %.3g)\n",
                best.engine.c_str(), a.dist.c_str(), a.d, a.n, eps, t, a.sink.c_str(),
                params.c_str(), static_cast<unsigned long long>(best.pairs), best.selectivity(),
                static_cast<unsigned long long>(best.candidates), best.seconds,
                stage(best, "index"), stage(best, "plan"), stage(best, "execute"),
                best.candidates_per_second(),
                static_cast<double>(best.candidates) / std::max(1e-9, stage(best, "execute")));
    for (const auto& [k, v] : best.notes) std::printf("    %s: %s\n", k.c_str(), v.c_str());
    std::fflush(stdout);
  }
  return 0;
}

// An open-addressing table id -> cell, the alternative to searching the sorted ids.
struct cell_hash {
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> cells;
  std::uint64_t mask = 0;
  explicit cell_hash(const grid::host_index& idx) {
    std::size_t cap = 16;
    while (cap < 2 * idx.n_cells()) cap *= 2;
    keys.assign(cap, ~0ull);
    cells.assign(cap, 0);
    mask = cap - 1;
    for (std::size_t c = 0; c < idx.n_cells(); ++c) {
      std::uint64_t h = hash(idx.cell_ids[c]);
      while (keys[h] != ~0ull) h = (h + 1) & mask;
      keys[h] = idx.cell_ids[c];
      cells[h] = static_cast<std::uint32_t>(c);
    }
  }
  std::uint64_t hash(std::uint64_t id) const { return (id * 0x9e3779b97f4a7c15ull >> 20) & mask; }
  std::size_t find(std::uint64_t id) const {
    for (std::uint64_t h = hash(id);; h = (h + 1) & mask) {
      if (keys[h] == id) return cells[h];
      if (keys[h] == ~0ull) return grid::host_index::npos;
    }
  }
};

int bench_lookup(const args& a) {
  const dataset pts = make_points(a.dist, a.n, a.d);
  const double eps = a.eps > 0 ? a.eps : find_eps(a, pts);
  grid::plan_options popt;
  popt.eps = eps;
  const grid::grid_plan plan = grid::plan_grid(pts.view(), popt, 16);
  const grid::host_index idx =
      grid::build_host_index(pts.view(), plan.geo, plan.dim_order, {16, false, true});
  const cell_hash table(idx);
  std::printf("%s%zuD n=%zu eps=%.6g: %zu non-empty cells, %.2f points per cell, k=%d\n",
              a.dist.c_str(), a.d, a.n, eps, idx.n_cells(),
              static_cast<double>(a.n) / static_cast<double>(idx.n_cells()), plan.geo.k);
  for (auto pattern : {grid::access_pattern::lid_unicomp, grid::access_pattern::full}) {
    struct method {
      const char* name;
      int kind;  // 0 binary, 1 rows, 2 hash, 3 tree, 4 rows with cursors (cells in id order)
      bool masks;
    };
    for (const method m : {method{"binary", 0, false}, method{"binary+masks", 0, true},
                           method{"rows", 1, false}, method{"rows+masks", 1, true},
                           method{"hash", 2, false}, method{"tree", 3, false},
                           method{"rows+cursors", 4, false}}) {
      double best = 1e300;
      std::uint64_t found = 0;
      for (int r = 0; r < a.reps; ++r) {
        detail::stopwatch clock;
        std::vector<std::uint64_t> totals(64, 0);
        detail::parallel_for(a.threads.front(), idx.n_cells(), 256,
                             [&](std::size_t begin, std::size_t end, unsigned w) {
          std::vector<cpu::point_range> out;
          std::vector<std::size_t> cursors(cpu::cursor_count(idx.geo.k), cpu::no_cursor);
          std::uint64_t total = 0;
          for (std::size_t c = begin; c < end; ++c) {
            out.clear();
            std::uint32_t own[grid::max_indexed_dims];
            idx.cell_coords(c, own);
            if (m.kind == 2) {
              grid::for_each_neighbor(idx.geo, own, grid::neighbor_box(idx.geo, own), pattern,
                                      [&](std::uint64_t id) {
                const std::size_t n = table.find(id);
                if (n != grid::host_index::npos) total += idx.cell_size(n);
              });
            } else {
              total += cpu::neighbor_ranges(
                  idx, own, idx.cell_ids[c], c, pattern,
                  m.kind == 0   ? cpu::lookup_method::binary
                  : m.kind == 3 ? cpu::lookup_method::tree
                                : cpu::lookup_method::rows,
                  m.masks, out, m.kind == 4 ? cursors.data() : nullptr);
            }
          }
          totals[w] += total;
        });
        best = std::min(best, clock.seconds());
        found = 0;
        for (auto t : totals) found += t;
      }
      std::printf("  %-12s %-14s %8.4fs  %6.1f ns/cell  (neighbour points %llu)\n",
                  pattern == grid::access_pattern::full ? "full" : "lid-unicomp", m.name, best,
                  best * 1e9 / static_cast<double>(idx.n_cells()),
                  static_cast<unsigned long long>(found));
    }
  }
  return 0;
}

template <class K>
void time_radix(const args& a, const std::vector<std::uint64_t>& keys0) {
  const std::size_t n = a.n;
  for (unsigned t : a.threads) {
    double best = 1e300;
    for (int r = 0; r < a.reps; ++r) {
      auto keys = grid::uninitialized<K>(n), keys2 = grid::uninitialized<K>(n);
      auto values = grid::uninitialized<std::uint32_t>(n);
      auto values2 = grid::uninitialized<std::uint32_t>(n);
      for (std::size_t i = 0; i < n; ++i) {
        keys[i] = static_cast<K>(keys0[i]);
        keys2[i] = 0;
        values[i] = static_cast<std::uint32_t>(i);
        values2[i] = 0;
      }
      detail::stopwatch clock;
      grid::radix_sort_pairs(keys.get(), values.get(), keys2.get(), values2.get(), n, a.bits, t);
      best = std::min(best, clock.seconds());
    }
    std::printf("radix %zu-bit keys  n=%zu bits=%d threads=%u  %.4fs\n", 8 * sizeof(K), n,
                a.bits, t, best);
  }
}

int bench_sort(const args& a) {
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> keys0(a.n);
  for (auto& k : keys0) k = rng() >> (64 - a.bits);
  time_radix<std::uint64_t>(a, keys0);
  if (a.bits <= 32) time_radix<std::uint32_t>(a, keys0);
  for (int stable = 0; stable < 2; ++stable) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> pairs(a.n);
    for (std::size_t i = 0; i < a.n; ++i) pairs[i] = {keys0[i], static_cast<std::uint32_t>(i)};
    detail::stopwatch clock;
    auto by_key = [](const auto& x, const auto& y) { return x.first < y.first; };
    if (stable) {
      std::stable_sort(pairs.begin(), pairs.end(), by_key);
    } else {
      std::sort(pairs.begin(), pairs.end(), by_key);
    }
    std::printf("%s n=%zu threads=1  %.4fs\n", stable ? "std::stable_sort" : "std::sort", a.n,
                clock.seconds());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  if (a.mode == "join") return bench_join(a);
  if (a.mode == "lookup") return bench_lookup(a);
  if (a.mode == "sort") return bench_sort(a);
  std::fprintf(stderr, "unknown mode %s (join, lookup, sort)\n", a.mode.c_str());
  return 2;
}
