#include "core/metric_join.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "core/engine.hpp"

namespace epsjoin {

std::string_view to_string(distance_metric m) {
  switch (m) {
    case distance_metric::euclidean: return "euclidean";
    case distance_metric::manhattan: return "manhattan";
    case distance_metric::chebyshev: return "chebyshev";
    case distance_metric::cosine: return "cosine";
    case distance_metric::haversine: return "haversine";
  }
  return "?";
}

std::optional<distance_metric> parse_metric(std::string_view name) {
  using m = distance_metric;
  if (name == "euclidean" || name == "l2") return m::euclidean;
  if (name == "manhattan" || name == "l1" || name == "cityblock") return m::manhattan;
  if (name == "chebyshev" || name == "linf") return m::chebyshev;
  if (name == "cosine") return m::cosine;
  if (name == "haversine" || name == "great-circle") return m::haversine;
  return std::nullopt;
}

}  // namespace epsjoin

namespace epsjoin::detail {

namespace {

constexpr double unit_roundoff = 0x1p-53;
constexpr double f32_unit_roundoff = 0x1p-24;
// Every rounding term of docs/metrics.md's bound is taken this many times over: a wider radius
// costs a few candidates, a narrower one would lose pairs.
constexpr double margin = 4.0;

double radians_of(double x, bool degrees) { return degrees ? x * (std::numbers::pi / 180.0) : x; }

// A power of two that brings the row's largest magnitude into [0.5, 1): exact scaling.
double scale_of(const double* a, std::size_t d) {
  double most = 0.0;
  for (std::size_t k = 0; k < d; ++k) most = std::max(most, std::fabs(a[k]));
  int exponent = 0;
  std::frexp(most, &exponent);
  return std::ldexp(1.0, -exponent);
}

}  // namespace

double metric_value(const join_options& o, const double* a, const double* b, std::size_t d) {
  switch (o.metric) {
    case distance_metric::cosine: {
      const double sa = scale_of(a, d), sb = scale_of(b, d);
      double dot = 0.0, na = 0.0, nb = 0.0;
      for (std::size_t k = 0; k < d; ++k) {
        const double x = a[k] * sa, y = b[k] * sb;
        dot += x * y;
        na += x * x;
        nb += y * y;
      }
      return 1.0 - dot / std::sqrt(na * nb);
    }
    case distance_metric::haversine: {
      const bool degrees = o.angles == angle_unit::degrees;
      const double lat_a = radians_of(a[0], degrees), lon_a = radians_of(a[1], degrees);
      const double lat_b = radians_of(b[0], degrees), lon_b = radians_of(b[1], degrees);
      const double s_lat = std::sin((lat_a - lat_b) / 2.0);
      const double s_lon = std::sin((lon_a - lon_b) / 2.0);
      const double h = s_lat * s_lat + std::cos(lat_a) * std::cos(lat_b) * (s_lon * s_lon);
      return 2.0 * std::asin(std::min(1.0, std::sqrt(h)));
    }
    default: break;
  }
  double acc = 0.0;
  for (std::size_t k = 0; k < d; ++k) {
    double diff = std::fabs(a[k] - b[k]);
    if (!o.box.empty()) diff = std::min(diff, o.box[k] - diff);
    if (o.metric == distance_metric::euclidean) {
      acc += diff * diff;
    } else if (o.metric == distance_metric::manhattan) {
      acc += diff;
    } else {
      acc = std::max(acc, diff);
    }
  }
  return acc;
}

double metric_limit(const join_options& o, double r) {
  if (o.metric == distance_metric::euclidean) return r * r;
  if (o.metric == distance_metric::haversine) return r / o.sphere_radius;
  return r;
}

bool supports_metric(const engine& e, distance_metric m) {
  return e.computes(m) || (runs_on_euclidean(m) && e.computes(distance_metric::euclidean));
}

void validate_metric_options(const join_options& o, std::size_t d) {
  const bool haversine = o.metric == distance_metric::haversine;
  EPSJOIN_EXPECTS(haversine || o.angles == angle_unit::radians,
                  "angle units apply to the haversine metric only, not ", to_string(o.metric));
  EPSJOIN_EXPECTS(haversine || o.sphere_radius == 1.0,
                  "a sphere radius applies to the haversine metric only, not ", to_string(o.metric));
  EPSJOIN_EXPECTS(std::isfinite(o.sphere_radius) && o.sphere_radius > 0,
                  "the sphere radius must be a finite number > 0, got ", o.sphere_radius);
  if (haversine) {
    EPSJOIN_EXPECTS(d == 2, "the haversine metric takes points of 2 columns (latitude, longitude), ",
                    "got ", d);
  }
  if (o.box.empty()) return;
  EPSJOIN_EXPECTS(!joins_unit_vectors(o.metric), "a periodic box does not apply to the ",
                  to_string(o.metric), " metric");
  EPSJOIN_EXPECTS(o.box.size() == d, "the periodic box has ", o.box.size(),
                  " sides but the points have ", d, " dimensions");
  for (std::size_t k = 0; k < d; ++k) {
    const double side = o.box[k];
    EPSJOIN_EXPECTS(std::isfinite(side) && side > 0, "periodic box side ", k,
                    " must be a finite number > 0, got ", side);
    EPSJOIN_EXPECTS(o.eps <= side / 2, "eps ", o.eps, " exceeds half the periodic box side ", k,
                    " (", side, "); the minimum image is unique only up to half the box");
  }
}

void validate_metric_points(const join_options& o, dataset_view v, const char* what) {
  const bool degrees = o.angles == angle_unit::degrees;
  for (std::size_t i = 0; i < v.n; ++i) {
    if (o.metric == distance_metric::haversine) {
      const double lat = v.at(i, 0), lon = v.at(i, 1);
      const double right = degrees ? 90.0 : std::numbers::pi / 2, full = 4 * right;
      EPSJOIN_EXPECTS(std::fabs(lat) <= right, what, ": point ", i, " has latitude ", lat,
                      "; latitudes lie in [-", right, ", ", right, "] ",
                      degrees ? "degrees" : "radians", " (column 0 is the latitude)");
      EPSJOIN_EXPECTS(std::fabs(lon) <= full, what, ": point ", i, " has longitude ", lon,
                      "; longitudes lie in [-", full, ", ", full, "] ",
                      degrees ? "degrees" : "radians");
    } else if (o.metric == distance_metric::cosine) {
      bool zero = true;
      for (std::size_t k = 0; k < v.d && zero; ++k) zero = v.at(i, k) == 0.0;
      EPSJOIN_EXPECTS(!zero, what, ": point ", i,
                      " is the zero vector; the cosine distance is undefined for it");
    }
    for (std::size_t k = 0; k < o.box.size(); ++k) {
      const double x = v.at(i, k);
      EPSJOIN_EXPECTS(x >= 0 && x < o.box[k], what, ": point ", i, ", dimension ", k, " is ", x,
                      "; coordinates must lie in [0, ", o.box[k], ") in the periodic box");
    }
  }
}

dataset unit_vectors(const join_options& o, dataset_view v, unsigned threads) {
  const bool haversine = o.metric == distance_metric::haversine;
  const bool degrees = o.angles == angle_unit::degrees;
  const std::size_t out_d = haversine ? 3 : v.d;
  dataset out(v.n, out_d);
  double* values = out.f64();
  parallel_for(threads, v.n, std::size_t{1} << 12, [&](std::size_t begin, std::size_t end, unsigned) {
    std::vector<double> row(v.d);
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t k = 0; k < v.d; ++k) row[k] = v.at(i, k);
      double* to = values + i * out_d;
      if (haversine) {
        const double lat = radians_of(row[0], degrees), lon = radians_of(row[1], degrees);
        to[0] = std::cos(lat) * std::cos(lon);
        to[1] = std::cos(lat) * std::sin(lon);
        to[2] = std::sin(lat);
      } else {
        const double scale = scale_of(row.data(), v.d);
        double norm2 = 0.0;
        for (std::size_t k = 0; k < v.d; ++k) norm2 += (row[k] * scale) * (row[k] * scale);
        const double norm = std::sqrt(norm2);
        for (std::size_t k = 0; k < v.d; ++k) to[k] = row[k] * scale / norm;
      }
    }
  });
  return out;
}

double unit_vector_radius(const join_options& o, std::size_t d, double engine_band) {
  const double u = unit_roundoff * margin;
  const double dd = static_cast<double>(d);
  double chord = 0;        // bound on the exact chord of any pair the re-check accepts
  double per_vector = 0;   // bound on |computed unit vector - exact unit vector|
  if (o.metric == distance_metric::cosine) {
    // The re-check's cosine distance is within (2d + 8) u of the exact one.
    const double accepted = std::min(o.eps, 2.0) + (2 * dd + 8) * u;
    chord = std::sqrt(2 * accepted) * (1 + 4 * u);
    per_vector = (dd + 8) * u;
  } else {
    const double angle = o.eps / o.sphere_radius;
    if (angle >= std::numbers::pi) {
      chord = 2.0;
    } else {
      // 2 sqrt(h~) <= 2 sin(angle / 2) + 4 pi u; |sqrt(h~) - sqrt(h)| <= 16 u sqrt(h) + 4 pi u.
      chord = (2 * std::sin(angle / 2) * (1 + 4 * u) + 12 * std::numbers::pi * u) * (1 + 16 * u);
    }
    per_vector = 16 * u;
  }
  double radius = chord * (1 + 4 * u) + 2 * per_vector;
  double band = engine_band;
  if (o.precision == scalar_type::f32) {
    // Coordinates rounded to float32 move each unit vector by at most 2^-24; the engine's own
    // float32 sum is covered as the test harness allows it.
    radius += 2 * margin * f32_unit_roundoff;
    band += (dd + 4) * 1.2e-7;
  }
  return radius * (1 + 2 * band);
}

double enclosing_ball_radius(const join_options& o, std::size_t d, double engine_band,
                             double largest) {
  const double dd = static_cast<double>(d);
  // The re-check sums d terms in float64 (L1: within (d + 1) u of the exact sum, relatively);
  // L-infinity's exact ball of radius eps lies in the Euclidean one of radius eps sqrt(d).
  const double u = unit_roundoff * margin;
  double radius = o.metric == distance_metric::manhattan ? o.eps : o.eps * std::sqrt(dd);
  radius *= 1 + (dd + 4) * u;
  double band = engine_band + 1e-12;
  if (o.precision == scalar_type::f32) {
    // Rounding to float32 moves each coordinate by at most largest 2^-24, so each difference by
    // twice that and the Euclidean distance by sqrt(d) times more; then float32's own sum.
    radius += margin * 2 * std::sqrt(dd) * largest * f32_unit_roundoff;
    band += (dd + 4) * 1.2e-7;
  }
  return radius * (1 + 2 * band);
}

double largest_magnitude(dataset_view points, unsigned threads) {
  std::vector<double> most(std::max(1u, threads), 0.0);
  parallel_for(threads, points.n, std::size_t{1} << 14,
               [&](std::size_t begin, std::size_t end, unsigned worker) {
                 double m = most[worker];
                 for (std::size_t i = begin; i < end; ++i) {
                   for (std::size_t k = 0; k < points.d; ++k) m = std::max(m, std::fabs(points.at(i, k)));
                 }
                 most[worker] = m;
               });
  return *std::max_element(most.begin(), most.end());
}

namespace {

const double* f64_rows(dataset_view v, const dataset& copy) {
  return v.type == scalar_type::f64 ? static_cast<const double*>(v.data) : copy.f64();
}

// The per-row terms of metric_filter_sink, by the oracle's expressions (reference/brute_cpu.cpp).
std::vector<double> row_terms(distance_metric m, bool degrees, const double* rows, std::size_t n,
                              std::size_t d, unsigned threads) {
  std::vector<double> terms(3 * n);
  parallel_for(threads, n, std::size_t{1} << 12, [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t i = begin; i < end; ++i) {
      const double* a = rows + i * d;
      double* t = terms.data() + 3 * i;
      if (m == distance_metric::cosine) {
        const double scale = scale_of(a, d);
        double norm2 = 0.0;
        for (std::size_t k = 0; k < d; ++k) {
          const double x = a[k] * scale;
          norm2 += x * x;
        }
        t[0] = scale;
        t[1] = norm2;
      } else {
        t[0] = radians_of(a[0], degrees);
        t[1] = radians_of(a[1], degrees);
        t[2] = std::cos(t[0]);
      }
    }
  });
  return terms;
}

// Whether the queries are the data itself: the same rows, not merely the same first row (a
// prefix of the data, X[:k] against X, starts where the data does).
bool same_rows(dataset_view queries, dataset_view data) {
  return data.data == queries.data && data.n == queries.n && data.type == queries.type;
}

}  // namespace

metric_filter_sink::metric_filter_sink(result_sink& inner, const join_options& options,
                                       dataset_view queries, dataset_view data, unsigned threads)
    : inner_(inner),
      options_(options),
      metric_(options.metric),
      eps_(options.metric == distance_metric::haversine ? options.eps / options.sphere_radius
                                                        : options.eps),
      d_(queries.d),
      queries_f64_(queries.type == scalar_type::f64 ? dataset() : dataset::to_f64(queries)),
      data_f64_(data.type == scalar_type::f64 || same_rows(queries, data) ? dataset()
                                                                           : dataset::to_f64(data)),
      queries_(f64_rows(queries, queries_f64_)),
      data_(same_rows(queries, data) ? queries_ : f64_rows(data, data_f64_)) {
  if (joins_enclosing_ball(metric_)) return;  // L1 and L-infinity need no per-row terms
  const bool degrees = options.angles == angle_unit::degrees;
  query_terms_ = row_terms(metric_, degrees, queries_, queries.n, d_, threads);
  if (!same_rows(queries, data)) {
    data_terms_ = row_terms(metric_, degrees, data_, data.n, d_, threads);
  }
  data_terms_of_ = same_rows(queries, data) ? query_terms_.data() : data_terms_.data();
}

bool metric_filter_sink::within(std::uint32_t q, std::uint32_t j) const {
  if (joins_enclosing_ball(metric_)) {
    // No per-row terms: the oracle's own expression.
    return metric_value(options_, queries_ + std::size_t{q} * d_, data_ + std::size_t{j} * d_,
                        d_) <= eps_;
  }
  const double* ta = query_terms_.data() + terms_per_row * q;
  const double* tb = data_terms_of_ + terms_per_row * j;
  if (metric_ == distance_metric::cosine) {
    const double* a = queries_ + std::size_t{q} * d_;
    const double* b = data_ + std::size_t{j} * d_;
    const double sa = ta[0], sb = tb[0];
    double dot = 0.0;
    for (std::size_t k = 0; k < d_; ++k) dot += (a[k] * sa) * (b[k] * sb);
    return 1.0 - dot / std::sqrt(ta[1] * tb[1]) <= eps_;
  }
  const double s_lat = std::sin((ta[0] - tb[0]) / 2.0);
  const double s_lon = std::sin((ta[1] - tb[1]) / 2.0);
  const double h = s_lat * s_lat + ta[2] * tb[2] * (s_lon * s_lon);
  return 2.0 * std::asin(std::min(1.0, std::sqrt(h))) <= eps_;
}

void metric_filter_sink::consume(std::span<const index_pair> pairs) {
  candidates_.fetch_add(pairs.size(), std::memory_order_relaxed);
  std::vector<index_pair> kept;
  kept.reserve(pairs.size());
  for (const index_pair& p : pairs) {
    if (within(p.query, p.neighbor)) kept.push_back(p);
  }
  if (!kept.empty()) inner_.consume(kept);
}

}  // namespace epsjoin::detail
