// eps_index against fresh joins (issue 27): one index built at max_eps and K query sets joined
// with it, against K fresh cpu-grid joins of the same query sets; then single queries at smaller
// eps, each against a fresh join at that eps and an index built at that eps (does a finer grid
// pay?; and an index holding finer grids, index_options::finer_grids), and self-joins of the indexed points at several eps against fresh self-joins. Every
// answer is checked equal to the fresh join's (per-query counts).
//
// usage: index_bench [DATA_SPEC (uniform:2:1M)] [QUERY_N (100k)] [K (8)] [SELECTIVITY (32)]
//                    [THREADS (all)]
// DATA_SPEC as `epsjoin join --generate` takes it; the query sets are drawn from the same
// distribution with other seeds. max_eps gives about SELECTIVITY neighbours a query.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "epsjoin/epsjoin.hpp"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The eps at which a sample of queries has about `selectivity` neighbours on average, from the
// library's own count (a count at a guess, scaled by the d-th root of the ratio, a few rounds).
double eps_for(epsjoin::resources& res, const epsjoin::dataset& data, double selectivity) {
  const std::size_t d = data.d();
  const std::size_t sample_n = std::min<std::size_t>(data.n(), 2000);
  epsjoin::dataset sample(std::vector<double>(data.f64(), data.f64() + sample_n * d), d);
  double eps = 0.01;
  for (int round = 0; round < 6; ++round) {
    epsjoin::join_options opt;
    opt.eps = eps;
    epsjoin::count_sink c;
    epsjoin::join(res, sample.view(), data.view(), opt, c);
    const double mean = static_cast<double>(c.total()) / static_cast<double>(sample_n);
    const double ratio = std::max(mean, 0.5) / selectivity;
    eps /= std::pow(ratio, 1.0 / static_cast<double>(d));
    if (ratio > 0.8 && ratio < 1.25) break;
  }
  return eps;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string spec_text = argc > 1 ? argv[1] : "uniform:2:1M";
    const std::size_t query_n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
    const int k = argc > 3 ? std::atoi(argv[3]) : 8;
    const double selectivity = argc > 4 ? std::atof(argv[4]) : 32;
    const unsigned threads = argc > 5 ? static_cast<unsigned>(std::atoi(argv[5]))
                                      : std::max(1u, std::thread::hardware_concurrency());
    epsjoin::resources res(threads);
    epsjoin::generator_spec spec = epsjoin::parse_generator_spec(spec_text);
    const epsjoin::dataset data = epsjoin::generate(spec);
    std::vector<epsjoin::dataset> query_sets;
    for (int i = 0; i < k; ++i) {
      epsjoin::generator_spec q = spec;
      q.n = query_n;
      q.seed = spec.seed + 1 + static_cast<std::uint64_t>(i);
      query_sets.push_back(epsjoin::generate(q));
    }
    const double max_eps = eps_for(res, data, selectivity);
    std::printf("data %s, %d query sets of %zu, max_eps %.6g (S ~ %g), %u threads\n",
                spec_text.c_str(), k, query_n, max_eps, selectivity, threads);

    epsjoin::join_options fresh_opt;
    fresh_opt.engine = "cpu-grid";
    auto fresh = [&](const epsjoin::dataset& q, double eps) {
      fresh_opt.eps = eps;
      epsjoin::count_sink c(true);
      epsjoin::join(res, q.view(), data.view(), fresh_opt, c);
      return c.per_point();
    };
    epsjoin::join_stats last;  // of the latest index query
    auto reused = [&](const epsjoin::eps_index& index, const epsjoin::dataset& q, double eps) {
      epsjoin::count_sink c(true);
      last = index.query(res, q.view(), eps, {}, c);
      return c.per_point();
    };
    auto stages = [&] {
      std::string text;
      for (const auto& s : last.stages) {
        text += (text.empty() ? "" : ", ") + s.name + " " + std::to_string(s.seconds).substr(0, 5);
      }
      return text;
    };

    // Build once + K queries against K fresh joins, interleaved query by query.
    double t = now();
    const epsjoin::eps_index index(res, data.view(), max_eps);
    const double build = now() - t;
    double index_queries = 0, fresh_joins = 0;
    bool same = true;
    for (const epsjoin::dataset& q : query_sets) {
      t = now();
      const auto a = reused(index, q, max_eps);
      index_queries += now() - t;
      t = now();
      const auto b = fresh(q, max_eps);
      fresh_joins += now() - t;
      same &= a == b;
    }
    std::printf("build %.3f s (%.1f MiB held), %d queries %.3f s: %.3f s in all, %.3f s a query\n",
                build, static_cast<double>(index.memory_bytes()) / (1 << 20), k, index_queries,
                build + index_queries, index_queries / k);
    std::printf("%d fresh joins %.3f s, %.3f s a join; index / fresh %.2f; answers %s\n", k,
                fresh_joins, fresh_joins / k, (build + index_queries) / fresh_joins,
                same ? "equal" : "DIFFER");

    // Smaller eps on the max_eps grid, against a fresh join and an index built at that eps.
    std::printf("a query's stages (s): %s\n", stages().c_str());
    epsjoin::index_options tiers;
    tiers.finer_grids = 3;
    t = now();
    const epsjoin::eps_index tiered(res, data.view(), max_eps, tiers);
    const double tiered_build = now() - t;
    std::printf("index with finer_grids=3: build %.3f s, %.1f MiB held\n", tiered_build,
                static_cast<double>(tiered.memory_bytes()) / (1 << 20));
    std::printf("%-8s %12s %12s %14s %14s %14s  %s\n", "eps/max", "index query", "fresh join",
                "finer build", "finer query", "tiered query", "stages of the index query (s)");
    for (const double f : {1.0, 0.5, 0.25, 0.125}) {
      const double eps = max_eps * f;
      const epsjoin::dataset& q = query_sets.front();
      t = now();
      const auto a = reused(index, q, eps);
      const double on_coarse = now() - t;
      const std::string coarse_stages = stages();
      t = now();
      const auto b = fresh(q, eps);
      const double fresh_s = now() - t;
      t = now();
      const epsjoin::eps_index finer(res, data.view(), eps);
      const double finer_build = now() - t;
      t = now();
      const auto c = reused(finer, q, eps);
      const double finer_query = now() - t;
      t = now();
      const auto e = reused(tiered, q, eps);
      const double tiered_query = now() - t;
      std::printf("%-8g %10.3f s %10.3f s %12.3f s %12.3f s %12.3f s  %s%s\n", f, on_coarse,
                  fresh_s, finer_build, finer_query, tiered_query, coarse_stages.c_str(),
                  a == b && b == c && c == e ? "" : "  answers DIFFER");
      same &= a == b && b == c && c == e;
    }
    // The indexed points among themselves at several eps (an eps sweep, as for DBSCAN).
    std::printf("%-8s %12s %12s  (self-joins)\n", "eps/max", "index", "fresh join");
    for (const double f : {1.0, 0.5, 0.25}) {
      const double eps = max_eps * f;
      epsjoin::count_sink a(true), b(true);
      t = now();
      index.self_join(res, eps, {}, a);
      const double on_index = now() - t;
      fresh_opt.eps = eps;
      t = now();
      epsjoin::self_join(res, data.view(), fresh_opt, b);
      const double fresh_s = now() - t;
      std::printf("%-8g %10.3f s %10.3f s%s\n", f, on_index, fresh_s,
                  a.per_point() == b.per_point() ? "" : "  answers DIFFER");
      same &= a.per_point() == b.per_point();
    }
    return same ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "index_bench: %s\n", e.what());
    return 2;
  }
}
