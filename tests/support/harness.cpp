#include "support/harness.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "epsjoin/index.hpp"
#include "support/seed.hpp"

namespace epsjoin::test {

namespace {

std::string rule_name(eps_rule r) {
  switch (r) {
    case eps_rule::none: return "nopairs";
    case eps_rule::sel1: return "sel1";
    case eps_rule::sel10: return "sel10";
    case eps_rule::sel100: return "sel100";
    case eps_rule::all: return "allpairs";
    case eps_rule::lattice: return "epsEqualsSpacing";
  }
  return "?";
}

std::vector<property_case> build_cases() {
  using k = shape_kind;
  using r = eps_rule;
  std::vector<property_case> cases = {
      // Degenerate sizes.
      {k::uniform, 0, 2, r::sel10}, {k::uniform, 1, 3, r::all}, {k::uniform, 2, 1, r::all},
      {k::uniform, 2, 5, r::none}, {k::uniform, 17, 2, r::all}, {k::duplicates, 30, 3, r::none},
      // Low dimensions, every shape, several selectivities.
      {k::uniform, 3000, 2, r::sel100}, {k::skewed, 3000, 2, r::sel10},
      {k::clusters, 2000, 2, r::sel100}, {k::uniform, 500, 1, r::sel10},
      {k::skewed, 800, 1, r::sel100}, {k::offset, 800, 2, r::sel10},
      {k::duplicates, 600, 2, r::sel10}, {k::embedded, 600, 3, r::sel10},
      {k::uniform, 1000, 3, r::sel10}, {k::skewed, 1500, 3, r::sel100},
      {k::clusters, 1000, 4, r::sel10}, {k::uniform, 1000, 4, r::sel1},
      {k::skewed, 1000, 5, r::sel10}, {k::offset, 600, 6, r::sel10},
      {k::uniform, 800, 8, r::sel10}, {k::clusters, 800, 8, r::sel100},
      {k::uniform, 600, 2, r::none}, {k::skewed, 600, 4, r::none},
      {k::uniform, 600, 2, r::all}, {k::clusters, 400, 6, r::all},
      // Points exactly on cell boundaries at distance exactly eps.
      {k::lattice, 300, 1, r::lattice}, {k::lattice, 600, 2, r::lattice},
      {k::lattice, 700, 3, r::lattice}, {k::lattice, 600, 4, r::lattice},
      {k::lattice, 500, 7, r::lattice},
      // High dimensions.
      {k::uniform, 400, 16, r::sel10}, {k::clusters, 400, 16, r::sel100},
      {k::embedded, 300, 20, r::sel10}, {k::skewed, 300, 32, r::sel10},
      {k::uniform, 200, 33, r::sel10}, {k::clusters, 300, 64, r::sel10},
      {k::uniform, 150, 128, r::sel10}, {k::duplicates, 200, 128, r::sel1},
      {k::offset, 200, 90, r::sel10}, {k::uniform, 150, 100, r::all},
  };
  // A x B joins, including empty sides.
  std::vector<property_case> cross = {
      {k::uniform, 700, 3, r::sel10, false, 500}, {k::skewed, 1000, 2, r::sel100, false, 300},
      {k::clusters, 500, 5, r::sel10, false, 0},  {k::clusters, 0, 5, r::sel10, false, 400},
      {k::lattice, 400, 2, r::lattice, false, 400}, {k::uniform, 200, 40, r::sel10, false, 150},
      {k::duplicates, 300, 2, r::all, false, 100},
  };
  cases.insert(cases.end(), cross.begin(), cross.end());
  return cases;
}

struct prepared_case {
  dataset data;
  dataset queries;  // A x B only
  double eps = 0;
};

prepared_case prepare(const property_case& c, scalar_type type) {
  prepared_case p;
  const std::uint64_t seed = test_seed();
  p.data = make_shape(c.kind, c.n, c.d, seed);
  if (!c.self_join) p.queries = make_shape(c.kind, c.n_queries, c.d, seed + 1);
  if (type == scalar_type::f32) {
    p.data = dataset::to_f32(p.data.view());
    if (!c.self_join) p.queries = dataset::to_f32(p.queries.view());
  }
  const dataset_view q = c.self_join ? p.data.view() : p.queries.view();
  const dataset_view b = p.data.view();
  switch (c.eps) {
    case eps_rule::none: p.eps = 1e-9; break;
    case eps_rule::sel1: p.eps = eps_for_selectivity(q, b, 1); break;
    case eps_rule::sel10: p.eps = eps_for_selectivity(q, b, 10); break;
    case eps_rule::sel100: p.eps = eps_for_selectivity(q, b, 100); break;
    case eps_rule::all: p.eps = eps_for_all_pairs(q, b); break;
    case eps_rule::lattice: p.eps = 0.25; break;
  }
  return p;
}

long double exact_squared_distance(dataset_view a, std::uint32_t i, dataset_view b,
                                   std::uint32_t j) {
  long double s = 0;
  for (std::size_t k = 0; k < a.d; ++k) {
    const long double diff = static_cast<long double>(a.at(i, k)) - b.at(j, k);
    s += diff * diff;
  }
  return s;
}

long double exact_distance(dataset_view a, std::uint32_t i, dataset_view b, std::uint32_t j) {
  return std::sqrt(exact_squared_distance(a, i, b, j));
}

std::string describe(const index_pair& p, dataset_view a, dataset_view b, double eps) {
  const long double dist = exact_distance(a, p.query, b, p.neighbor);
  char text[160];
  std::snprintf(text, sizeof text, "(%u, %u) at distance %.17Lg, eps %.17g (relative %.3Lg)",
                p.query, p.neighbor, dist, eps, (dist - eps) / eps);
  return text;
}

}  // namespace

std::string property_case::name() const {
  std::string s = to_string(kind) + "_n" + std::to_string(n) + "_d" + std::to_string(d) + "_" +
                  rule_name(eps);
  if (!self_join) s += "_AxB_q" + std::to_string(n_queries);
  return s;
}

const std::vector<property_case>& property_cases() {
  static const std::vector<property_case> cases = build_cases();
  return cases;
}

std::vector<index_pair> run_collect(const engine_config& config, dataset_view queries,
                                    dataset_view data, bool self_join, double eps,
                                    join_stats* stats, unsigned threads) {
  resources res(threads);
  join_options opt;
  opt.eps = eps;
  opt.engine = config.engine;
  opt.params = config.params;
  opt.precision = config.precision;
  std::vector<index_pair> pairs;
  callback_sink sink([&](std::span<const index_pair> batch) {
    pairs.insert(pairs.end(), batch.begin(), batch.end());
  });
  join_stats s = self_join ? epsjoin::self_join(res, data, opt, sink)
                           : epsjoin::join(res, queries, data, opt, sink);
  if (stats != nullptr) *stats = s;
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

double error_band(const engine_config& config, std::size_t d) {
  double band = 1e-12;
  for (const engine_info& e : engines()) {
    if (e.name == config.engine) band = std::max(band, e.error_band);
  }
  if (config.precision == scalar_type::f32) {
    // Each of d squared differences and the running sum round once in float32.
    band = std::max(band, static_cast<double>(d + 4) * 1.2e-7);
  }
  return band;
}

testing::AssertionResult same_pairs(const std::vector<index_pair>& expected,
                                    const std::vector<index_pair>& actual, dataset_view queries,
                                    dataset_view data, double eps, double band) {
  std::vector<index_pair> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(),
                      std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  auto outside_band = [&](const index_pair& p) {
    const long double dist = exact_distance(queries, p.query, data, p.neighbor);
    return std::fabs(dist - eps) > band * eps;
  };
  // A pair at exactly eps is within eps: the band forgives rounding, never a `<` for `<=`.
  auto wrongly_missing = [&](const index_pair& p) {
    return exact_squared_distance(queries, p.query, data, p.neighbor) ==
               static_cast<long double>(eps) * eps ||
           outside_band(p);
  };
  const auto bad_missing = std::find_if(missing.begin(), missing.end(), wrongly_missing);
  const auto bad_extra = std::find_if(extra.begin(), extra.end(), outside_band);
  if (bad_missing == missing.end() && bad_extra == extra.end()) {
    auto ok = testing::AssertionSuccess();
    if (!missing.empty() || !extra.empty()) {
      ok << missing.size() << " missing and " << extra.size() << " extra pairs, all in the band";
    }
    return ok;
  }
  auto fail = testing::AssertionFailure();
  fail << "expected " << expected.size() << " pairs, got " << actual.size() << "; "
       << missing.size() << " missing, " << extra.size() << " extra (band " << band << ")";
  if (bad_missing != missing.end()) {
    fail << "\n  first missing: " << describe(*bad_missing, queries, data, eps);
  }
  if (bad_extra != extra.end()) {
    fail << "\n  first extra:   " << describe(*bad_extra, queries, data, eps);
  }
  return fail;
}

void check_against_oracle(const engine_config& config, const property_case& c) {
  const prepared_case p = prepare(c, config.precision);
  const dataset_view data = p.data.view();
  const dataset_view queries = c.self_join ? data : p.queries.view();

  // The oracle's answer depends only on the case and the data type; compute it once per suite.
  static std::mutex cache_mutex;
  static std::map<std::string, std::vector<index_pair>> oracle_cache;
  std::vector<index_pair> expected;
  {
    const std::string key = c.name() + std::string(to_string(config.precision));
    std::lock_guard lock(cache_mutex);
    auto it = oracle_cache.find(key);
    if (it == oracle_cache.end()) {
      it = oracle_cache
               .emplace(key, run_collect({"brute-cpu"}, queries, data, c.self_join, p.eps))
               .first;
    }
    expected = it->second;
  }

  join_stats stats;
  const auto actual = run_collect(config, queries, data, c.self_join, p.eps, &stats);
  SCOPED_TRACE("engine " + config.engine + ", case " + c.name() + ", eps " +
               std::to_string(p.eps) + ", seed " + std::to_string(test_seed()));

  const auto dup = std::adjacent_find(actual.begin(), actual.end());
  EXPECT_TRUE(dup == actual.end()) << "pair (" << dup->query << ", " << dup->neighbor
                                   << ") delivered more than once";
  for (const index_pair& pr : actual) {
    ASSERT_LT(pr.query, queries.n);
    ASSERT_LT(pr.neighbor, data.n);
    if (c.self_join) {
      ASSERT_NE(pr.query, pr.neighbor) << "self pair delivered";
    }
  }
  EXPECT_TRUE(same_pairs(expected, actual, queries, data, p.eps, error_band(config, c.d)));
  EXPECT_EQ(stats.pairs, actual.size());
  EXPECT_EQ(stats.engine, config.engine);

  // Count-only mode must count exactly what the pair mode delivers.
  resources res(3);
  join_options opt;
  opt.eps = p.eps;
  opt.engine = config.engine;
  opt.params = config.params;
  opt.precision = config.precision;
  count_sink counter(true);
  const join_stats counted = c.self_join ? self_join(res, data, opt, counter)
                                         : join(res, queries, data, opt, counter);
  EXPECT_EQ(counter.total(), actual.size());
  EXPECT_EQ(counted.pairs, actual.size());
  std::vector<std::uint64_t> per_query(queries.n, 0);
  for (const index_pair& pr : actual) ++per_query[pr.query];
  EXPECT_EQ(counter.per_point(), per_query);
  // A sink that keeps only the total: the GPU engines sum on the device and hand over the sum.
  count_sink total_only;
  const join_stats totalled = c.self_join ? self_join(res, data, opt, total_only)
                                          : join(res, queries, data, opt, total_only);
  EXPECT_EQ(total_only.total(), actual.size());
  EXPECT_EQ(totalled.pairs, actual.size());

  // The CSR table (row-wise delivery where the engine offers it) holds the same pairs, plus
  // each point's own id in a self-join asked to include self pairs.
  opt.include_self = c.self_join;
  csr_sink csr(true);
  const join_stats tabled = c.self_join ? self_join(res, data, opt, csr)
                                        : join(res, queries, data, opt, csr);
  const neighbor_table& table = csr.table();
  ASSERT_EQ(table.n_queries(), queries.n);
  std::vector<index_pair> expected_rows = actual;
  if (c.self_join) {
    for (std::uint32_t q = 0; q < queries.n; ++q) expected_rows.push_back({q, q});
    std::sort(expected_rows.begin(), expected_rows.end());
  }
  std::vector<index_pair> rows;
  rows.reserve(table.n_pairs());
  for (std::uint32_t q = 0; q < queries.n; ++q) {
    for (std::uint32_t nb : table.row(q)) rows.push_back({q, nb});
  }
  EXPECT_TRUE(rows == expected_rows) << "the CSR table differs from the pairs delivered ("
                                     << rows.size() << " vs " << expected_rows.size() << ")";
  EXPECT_EQ(tabled.pairs + tabled.self_pairs, expected_rows.size());

  // Without self pairs and on one thread (rows written with plain stores, no slot before them).
  resources one(1);
  opt.include_self = false;
  csr_sink bare(true);
  const join_stats bare_stats = c.self_join ? self_join(one, data, opt, bare)
                                            : join(one, queries, data, opt, bare);
  rows.clear();
  for (std::uint32_t q = 0; q < bare.table().n_queries(); ++q) {
    for (std::uint32_t nb : bare.table().row(q)) rows.push_back({q, nb});
  }
  EXPECT_TRUE(rows == actual) << "the one-thread CSR table without self pairs differs from the "
                              << "pairs delivered (" << rows.size() << " vs " << actual.size()
                              << ")";
  EXPECT_EQ(bare_stats.pairs, actual.size());
}

neighbor_table self_join_csr(const dataset& points, double eps, const std::string& engine,
                             csr_run how) {
  resources res(how.threads);
  join_options opt;
  opt.eps = eps;
  opt.engine = engine;
  opt.params = std::move(how.params);
  opt.approximate = how.approximate;
  opt.include_self = how.include_self;
  csr_sink csr(true);
  const join_stats stats = self_join(res, points.view(), opt, csr);
  if (how.stats != nullptr) *how.stats = stats;
  return csr.release();
}

std::uint64_t self_join_count(const dataset& points, double eps, const std::string& engine,
                              std::map<std::string, std::string> params) {
  resources res;
  join_options opt;
  opt.eps = eps;
  opt.engine = engine;
  opt.params = std::move(params);
  count_sink sink;
  return self_join(res, points.view(), opt, sink).pairs;
}

std::string note_of(const join_stats& stats, const std::string& key) {
  for (const auto& [k, v] : stats.notes) {
    if (k == key) return v;
  }
  return "";
}

std::vector<index_pair> index_pairs(const eps_index& index, const dataset* queries, double eps,
                                    join_stats* stats, bool include_self) {
  resources res(3);
  std::vector<index_pair> pairs;
  callback_sink sink([&](std::span<const index_pair> batch) {
    pairs.insert(pairs.end(), batch.begin(), batch.end());
  });
  query_options qo;
  qo.include_self = include_self;
  const join_stats s = queries == nullptr ? index.self_join(res, eps, qo, sink)
                                          : index.query(res, queries->view(), eps, qo, sink);
  if (stats != nullptr) *stats = s;
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace epsjoin::test
