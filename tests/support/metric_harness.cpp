#include "support/metric_harness.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <random>

#include "support/seed.hpp"

namespace epsjoin::test {

namespace {

using dm = distance_metric;

double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double normal(std::mt19937_64& rng) {
  const double u1 = std::max(unit(rng), 1e-300);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * unit(rng));
}

std::string shape_name(metric_shape s) {
  switch (s) {
    case metric_shape::uniform: return "uniform";
    case metric_shape::clusters: return "clusters";
    case metric_shape::skewed: return "skewed";
    case metric_shape::duplicates: return "duplicates";
    case metric_shape::lattice: return "lattice";
    case metric_shape::signed_normal: return "signedNormal";
    case metric_shape::binary: return "binary";
    case metric_shape::sphere: return "sphere";
    case metric_shape::poles: return "poles";
    case metric_shape::antimeridian: return "antimeridian";
    case metric_shape::box_uniform: return "boxUniform";
    case metric_shape::box_lattice: return "boxLattice";
  }
  return "?";
}

std::string eps_name(metric_eps e) {
  switch (e) {
    case metric_eps::none: return "nopairs";
    case metric_eps::sel10: return "sel10";
    case metric_eps::sel100: return "sel100";
    case metric_eps::tie: return "epsAtTies";
    case metric_eps::all: return "allpairs";
  }
  return "?";
}

std::size_t lattice_side(std::size_t n, std::size_t d) {
  return static_cast<std::size_t>(
      std::max(2.0, std::ceil(std::pow(static_cast<double>(n), 1.0 / static_cast<double>(d)))));
}

// (latitude, longitude) in degrees, converted to radians unless `degrees`.
void put_angles(std::vector<double>& v, std::size_t i, double lat, double lon, bool degrees) {
  const double to = degrees ? 1.0 : std::numbers::pi / 180.0;
  v[2 * i] = lat * to;
  v[2 * i + 1] = lon * to;
}

}  // namespace

dataset make_metric_points(const metric_case& c, dm metric, std::size_t n, std::uint64_t seed) {
  const std::size_t d = c.d;
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(c.shape) * 31 + n);
  std::vector<double> v(n * d);
  auto from_shape = [&](shape_kind k) {
    const dataset s = make_shape(k, n, d, seed);
    std::copy(s.f64(), s.f64() + n * d, v.begin());
  };
  switch (c.shape) {
    case metric_shape::uniform: from_shape(shape_kind::uniform); break;
    case metric_shape::clusters: from_shape(shape_kind::clusters); break;
    case metric_shape::skewed: from_shape(shape_kind::skewed); break;
    case metric_shape::duplicates: from_shape(shape_kind::duplicates); break;
    case metric_shape::lattice: from_shape(shape_kind::lattice); break;
    case metric_shape::signed_normal:
      for (double& x : v) x = normal(rng);
      break;
    case metric_shape::binary:
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t weight = std::size_t{1} << (rng() % 3);
        for (std::size_t set = 0; set < std::min(weight, d);) {
          double& x = v[i * d + rng() % d];
          if (x == 0) {
            x = 1;
            ++set;
          }
        }
      }
      break;
    case metric_shape::sphere:
      for (std::size_t i = 0; i < n; ++i) {
        put_angles(v, i, std::asin(2 * unit(rng) - 1) * 180 / std::numbers::pi,
                   360 * unit(rng) - 180, c.degrees);
      }
      break;
    case metric_shape::poles:
      for (std::size_t i = 0; i < n; ++i) {
        const double from_pole = rng() % 10 == 0 ? 0.0 : 0.05 * unit(rng);
        put_angles(v, i, (rng() % 2 ? 90 : -90) * (1 - from_pole / 90), 360 * unit(rng) - 180,
                   c.degrees);
      }
      break;
    case metric_shape::antimeridian:
      for (std::size_t i = 0; i < n; ++i) {
        put_angles(v, i, 0.2 * unit(rng) - 0.1, (rng() % 2 ? 180 : -180) - 0.05 * (2 * unit(rng) - 1),
                   c.degrees);
        // Longitudes stay within +-180: fold the few that passed it.
        double& lon = v[2 * i + 1];
        const double half = c.degrees ? 180.0 : std::numbers::pi;
        if (lon > half) lon -= 2 * half;
        if (lon < -half) lon += 2 * half;
      }
      break;
    case metric_shape::box_uniform:
      for (double& x : v) x = unit(rng);
      break;
    case metric_shape::box_lattice: {
      const std::size_t side = lattice_side(c.n, d);  // the box's, for queries too
      for (double& x : v) x = 0.25 * static_cast<double>(rng() % side);
      break;
    }
  }
  if (metric == dm::cosine) {
    for (std::size_t i = 0; i < n; ++i) {
      if (std::all_of(v.begin() + i * d, v.begin() + (i + 1) * d, [](double x) { return x == 0; })) {
        v[i * d] = 0.25;
      }
    }
  }
  return dataset(std::move(v), d);
}

std::vector<double> metric_box(const metric_case& c) {
  if (!c.periodic) return {};
  if (c.shape == metric_shape::box_lattice) {
    return std::vector<double>(c.d, 0.25 * static_cast<double>(lattice_side(c.n, c.d)));
  }
  return std::vector<double>(c.d, 1.0);
}

namespace {

const double* row(const dataset& s, std::size_t i) { return s.f64() + i * s.d(); }

// About `selectivity` neighbours a query: the k-th smallest distance from up to 64 queries.
double eps_by_sample(const join_options& o, const dataset& q, const dataset& b, double selectivity) {
  std::vector<long double> dist;
  const std::size_t queries = std::min<std::size_t>(64, q.n());
  for (std::size_t i = 0; i < queries; ++i) {
    for (std::size_t j = 0; j < b.n(); ++j) dist.push_back(exact_metric_distance(o, row(q, i), row(b, j), q.d()));
  }
  if (dist.empty()) return 0.1;
  // Halfway between the k-th and the next distance: no pair sits at eps by accident.
  std::sort(dist.begin(), dist.end());
  const auto k = std::min(dist.size() - 1, static_cast<std::size_t>(selectivity * static_cast<double>(queries)));
  const long double next = k + 1 < dist.size() ? dist[k + 1] : dist[k] * 1.01L + 1e-6L;
  double eps = std::max(static_cast<double>((dist[k] + next) / 2), 1e-6);
  if (!o.box.empty()) eps = std::min(eps, *std::min_element(o.box.begin(), o.box.end()) / 2);
  return eps;
}

}  // namespace

double metric_case_eps(const metric_case& c, const join_options& o, const dataset& q, const dataset& b) {
  switch (c.eps) {
    case metric_eps::none: return 1e-9;
    case metric_eps::sel10: return eps_by_sample(o, q, b, 10);
    case metric_eps::sel100: return eps_by_sample(o, q, b, 100);
    case metric_eps::tie: return o.metric == dm::cosine ? 0.5 : 0.25;
    case metric_eps::all:
      if (!o.box.empty()) return *std::min_element(o.box.begin(), o.box.end()) / 2;
      if (o.metric == dm::cosine) return 2.0;
      if (o.metric == dm::haversine) return std::numbers::pi;
      return eps_for_all_pairs(q.view(), b.view()) * static_cast<double>(c.d);
  }
  return 0.1;
}

namespace {

std::vector<index_pair> collect(const engine_config& config, join_options opt, dataset_view q,
                                dataset_view b, bool self, join_stats* stats = nullptr) {
  resources res(3);
  opt.engine = config.engine;
  opt.params = config.params;
  opt.precision = config.precision;
  std::vector<index_pair> pairs;
  std::mutex m;
  callback_sink sink([&](std::span<const index_pair> batch) {
    std::lock_guard lock(m);
    pairs.insert(pairs.end(), batch.begin(), batch.end());
  });
  const join_stats s = self ? self_join(res, b, opt, sink) : join(res, q, b, opt, sink);
  if (stats != nullptr) *stats = s;
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace

std::string metric_case::name() const {
  std::string s = shape_name(shape) + "_n" + std::to_string(n) + "_d" + std::to_string(d) + "_" +
                  eps_name(eps);
  if (degrees) s += "_degrees";
  if (periodic) s += "_periodic";
  if (!self_join) s += "_AxB_q" + std::to_string(n_queries);
  return s;
}

std::vector<metric_case> metric_cases(dm metric, bool periodic) {
  using s = metric_shape;
  using e = metric_eps;
  if (periodic) {
    return {{s::box_uniform, 0, 2, e::sel10, true, 0, false, true},
            {s::box_uniform, 1, 3, e::all, true, 0, false, true},
            {s::box_uniform, 2000, 2, e::sel10, true, 0, false, true},
            {s::box_uniform, 1500, 3, e::sel100, true, 0, false, true},
            {s::box_uniform, 800, 1, e::sel10, true, 0, false, true},
            {s::box_uniform, 600, 5, e::sel10, true, 0, false, true},
            {s::box_uniform, 300, 12, e::sel10, true, 0, false, true},
            {s::box_uniform, 400, 2, e::all, true, 0, false, true},
            {s::box_lattice, 500, 2, e::tie, true, 0, false, true},
            {s::box_lattice, 27, 3, e::tie, true, 0, false, true},
            // A box of side 0.5 = 2 eps: pairs at exactly eps both ways round, counted once.
            {s::box_lattice, 8, 3, e::tie, true, 0, false, true},
            {s::box_lattice, 64, 6, e::tie, true, 0, false, true},
            {s::box_lattice, 700, 3, e::tie, true, 0, false, true},
            {s::box_uniform, 700, 3, e::sel10, false, 400, false, true},
            {s::box_lattice, 300, 2, e::tie, false, 300, false, true}};
  }
  switch (metric) {
    case dm::cosine:
      return {{s::uniform, 0, 3, e::sel10}, {s::uniform, 1, 3, e::all},
              {s::uniform, 2, 2, e::all}, {s::signed_normal, 17, 4, e::all},
              {s::uniform, 1500, 2, e::sel10}, {s::signed_normal, 1500, 3, e::sel100},
              {s::clusters, 1000, 5, e::sel10}, {s::skewed, 800, 8, e::sel10},
              {s::duplicates, 500, 3, e::sel10}, {s::signed_normal, 400, 16, e::sel10},
              {s::signed_normal, 300, 64, e::sel10}, {s::uniform, 600, 3, e::none},
              {s::binary, 600, 6, e::tie}, {s::binary, 400, 8, e::tie},
              {s::signed_normal, 400, 2, e::all},
              {s::signed_normal, 600, 3, e::sel10, false, 400},
              {s::binary, 300, 6, e::tie, false, 200}};
    case dm::haversine:
      return {{s::sphere, 0, 2, e::sel10}, {s::sphere, 1, 2, e::all},
              {s::sphere, 2000, 2, e::sel10}, {s::sphere, 1500, 2, e::sel100, true, 0, true},
              {s::poles, 800, 2, e::sel10}, {s::poles, 800, 2, e::sel100, true, 0, true},
              {s::antimeridian, 800, 2, e::sel10}, {s::antimeridian, 800, 2, e::sel10, true, 0, true},
              {s::sphere, 300, 2, e::all}, {s::sphere, 500, 2, e::none},
              {s::duplicates, 300, 2, e::sel10},
              {s::sphere, 700, 2, e::sel10, false, 300, true},
              {s::antimeridian, 400, 2, e::sel100, false, 300}};
    default:
      return {{s::uniform, 0, 2, e::sel10}, {s::uniform, 1, 3, e::all},
              {s::uniform, 2, 1, e::all}, {s::uniform, 17, 2, e::all},
              {s::duplicates, 30, 3, e::none}, {s::uniform, 3000, 2, e::sel100},
              {s::skewed, 2000, 2, e::sel10}, {s::clusters, 1500, 3, e::sel100},
              {s::uniform, 500, 1, e::sel10}, {s::uniform, 1000, 4, e::sel10},
              {s::skewed, 800, 6, e::sel10}, {s::uniform, 600, 8, e::sel10},
              {s::duplicates, 500, 2, e::sel10}, {s::uniform, 400, 16, e::sel10},
              {s::clusters, 300, 40, e::sel10}, {s::uniform, 150, 100, e::all},
              {s::lattice, 300, 1, e::tie}, {s::lattice, 600, 2, e::tie},
              {s::lattice, 700, 3, e::tie}, {s::lattice, 500, 7, e::tie},
              {s::lattice, 400, 12, e::tie},
              {s::uniform, 700, 3, e::sel10, false, 500},
              {s::lattice, 400, 2, e::tie, false, 400},
              {s::clusters, 500, 5, e::sel10, false, 0}};
  }
}

double metric_band(dm metric, std::size_t d, double eps) {
  if (metric == dm::haversine) return 1e-10;
  if (metric == dm::cosine) return 1e-12 + (4 * static_cast<double>(d) + 16) * 0x1p-53 / eps;
  return 1e-12;
}

long double exact_metric_distance(const join_options& o, const double* a, const double* b,
                                  std::size_t d) {
  using ld = long double;
  if (o.metric == dm::haversine) {
    const ld to = o.angles == angle_unit::degrees ? std::numbers::pi_v<ld> / 180 : 1;
    auto vec = [&](const double* p, ld* out) {
      const ld lat = p[0] * to, lon = p[1] * to;
      out[0] = std::cos(lat) * std::cos(lon);
      out[1] = std::cos(lat) * std::sin(lon);
      out[2] = std::sin(lat);
    };
    ld u[3], v[3];
    vec(a, u);
    vec(b, v);
    const ld cx = u[1] * v[2] - u[2] * v[1], cy = u[2] * v[0] - u[0] * v[2],
             cz = u[0] * v[1] - u[1] * v[0];
    return std::atan2(std::sqrt(cx * cx + cy * cy + cz * cz), u[0] * v[0] + u[1] * v[1] + u[2] * v[2]);
  }
  if (o.metric == dm::cosine) {
    ld dot = 0, na = 0, nb = 0;
    for (std::size_t k = 0; k < d; ++k) {
      dot += static_cast<ld>(a[k]) * b[k];
      na += static_cast<ld>(a[k]) * a[k];
      nb += static_cast<ld>(b[k]) * b[k];
    }
    return 1 - dot / std::sqrt(na * nb);
  }
  ld sum = 0, most = 0;
  for (std::size_t k = 0; k < d; ++k) {
    ld diff = std::fabs(static_cast<ld>(a[k]) - b[k]);
    if (!o.box.empty()) diff = std::min(diff, o.box[k] - diff);
    sum += o.metric == dm::euclidean ? diff * diff : diff;
    most = std::max(most, diff);
  }
  if (o.metric == dm::chebyshev) return most;
  return o.metric == dm::euclidean ? std::sqrt(sum) : sum;
}

void check_metric_against_oracle(const engine_config& config, dm metric, const metric_case& c) {
  const std::uint64_t seed = test_seed();
  const dataset data = make_metric_points(c, metric, c.n, seed);
  const dataset query_set = c.self_join ? dataset() : make_metric_points(c, metric, c.n_queries, seed + 1);
  const dataset& queries = c.self_join ? data : query_set;
  join_options opt;
  opt.metric = metric;
  opt.angles = c.degrees ? angle_unit::degrees : angle_unit::radians;
  opt.box = metric_box(c);
  opt.eps = metric_case_eps(c, opt, queries, data);
  SCOPED_TRACE("engine " + config.engine + ", metric " + std::string(to_string(metric)) +
               ", case " + c.name() + ", eps " + std::to_string(opt.eps) + ", seed " +
               std::to_string(seed));

  static std::mutex cache_mutex;
  static std::map<std::string, std::vector<index_pair>> oracle_cache;
  std::vector<index_pair> expected;
  {
    const std::string key = std::string(to_string(metric)) + c.name();
    std::lock_guard lock(cache_mutex);
    auto it = oracle_cache.find(key);
    if (it == oracle_cache.end()) {
      it = oracle_cache.emplace(key, collect({"brute-cpu"}, opt, queries.view(), data.view(), c.self_join)).first;
    }
    expected = it->second;
  }
  join_stats stats;
  const auto actual = collect(config, opt, queries.view(), data.view(), c.self_join, &stats);
  EXPECT_TRUE(std::adjacent_find(actual.begin(), actual.end()) == actual.end()) << "a pair twice";
  for (const index_pair& p : actual) {
    ASSERT_LT(p.query, queries.n());
    ASSERT_LT(p.neighbor, data.n());
    if (c.self_join) {
      ASSERT_NE(p.query, p.neighbor) << "self pair delivered";
    }
  }

  // Disagreement is forgiven only within the band around eps, never at exactly eps.
  const double band = std::max(metric_band(metric, c.d, opt.eps), error_band(config, c.d));
  std::vector<index_pair> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(), std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(), std::back_inserter(extra));
  auto distance = [&](const index_pair& p) {
    return exact_metric_distance(opt, row(queries, p.query), row(data, p.neighbor), c.d);
  };
  for (const index_pair& p : missing) {
    const long double dist = distance(p);
    EXPECT_TRUE(dist != opt.eps && std::fabs(dist - opt.eps) <= band * opt.eps)
        << "missing (" << p.query << ", " << p.neighbor << ") at " << static_cast<double>(dist);
  }
  for (const index_pair& p : extra) {
    const long double dist = distance(p);
    EXPECT_TRUE(std::fabs(dist - opt.eps) <= band * opt.eps)
        << "extra (" << p.query << ", " << p.neighbor << ") at " << static_cast<double>(dist);
  }
  EXPECT_EQ(stats.pairs, actual.size());

  // Counts only, and CSR rows with self pairs: the same pairs.
  resources res(3);
  opt.engine = config.engine;
  opt.params = config.params;
  opt.precision = config.precision;
  count_sink counter(true);
  const join_stats counted = c.self_join ? self_join(res, data.view(), opt, counter)
                                         : join(res, queries.view(), data.view(), opt, counter);
  EXPECT_EQ(counted.pairs, actual.size());
  std::vector<std::uint64_t> per_query(queries.n(), 0);
  for (const index_pair& p : actual) ++per_query[p.query];
  EXPECT_EQ(counter.per_point(), per_query);

  opt.include_self = c.self_join;
  csr_sink csr(true);
  if (c.self_join) {
    self_join(res, data.view(), opt, csr);
  } else {
    join(res, queries.view(), data.view(), opt, csr);
  }
  std::vector<index_pair> rows, expected_rows = actual;
  if (c.self_join) {
    for (std::uint32_t q = 0; q < queries.n(); ++q) expected_rows.push_back({q, q});
    std::sort(expected_rows.begin(), expected_rows.end());
  }
  for (std::uint32_t q = 0; q < csr.table().n_queries(); ++q) {
    for (std::uint32_t nb : csr.table().row(q)) rows.push_back({q, nb});
  }
  EXPECT_TRUE(rows == expected_rows) << "CSR rows differ from the pairs (" << rows.size()
                                     << " vs " << expected_rows.size() << ")";
}

}  // namespace epsjoin::test
