#include "core/metric_join.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/engine.hpp"
#include "core/expects.hpp"
#include "core/parallel.hpp"

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

double cosine_distance(const double* a, const double* b, std::size_t d) {
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

double great_circle(const double* a, const double* b, bool degrees) {
  const double lat_a = radians_of(a[0], degrees), lon_a = radians_of(a[1], degrees);
  const double lat_b = radians_of(b[0], degrees), lon_b = radians_of(b[1], degrees);
  const double s_lat = std::sin((lat_a - lat_b) / 2.0);
  const double s_lon = std::sin((lon_a - lon_b) / 2.0);
  const double h = s_lat * s_lat + std::cos(lat_a) * std::cos(lat_b) * (s_lon * s_lon);
  return 2.0 * std::asin(std::min(1.0, std::sqrt(h)));
}

}  // namespace

bool supports_metric(const engine& e, distance_metric m) {
  return e.computes(m) || (joins_unit_vectors(m) && e.computes(distance_metric::euclidean));
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

metric_check::metric_check(const join_options& o)
    : metric_(o.metric),
      degrees_(o.angles == angle_unit::degrees),
      eps_(o.metric == distance_metric::haversine ? o.eps / o.sphere_radius : o.eps) {}

bool metric_check::within(const double* a, const double* b, std::size_t d) const {
  if (metric_ == distance_metric::cosine) return cosine_distance(a, b, d) <= eps_;
  return great_circle(a, b, degrees_) <= eps_;
}

metric_filter_sink::metric_filter_sink(result_sink& inner, const join_options& options,
                                       dataset_view queries, dataset_view data)
    : inner_(inner),
      check_(options),
      queries_f64_(queries.type == scalar_type::f64 ? dataset() : dataset::to_f64(queries)),
      data_f64_(data.type == scalar_type::f64 || data.data == queries.data ? dataset()
                                                                           : dataset::to_f64(data)),
      queries_(queries),
      data_(data) {}

const double* metric_filter_sink::row(const dataset& copy, dataset_view v, std::size_t i) const {
  if (v.type == scalar_type::f64) return static_cast<const double*>(v.data) + i * v.d;
  return copy.f64() + i * v.d;
}

void metric_filter_sink::consume(std::span<const index_pair> pairs) {
  candidates_.fetch_add(pairs.size(), std::memory_order_relaxed);
  // A self-join's data is its queries: one float64 copy serves both sides.
  const dataset& data_copy = data_.data == queries_.data ? queries_f64_ : data_f64_;
  std::vector<index_pair> kept;
  kept.reserve(pairs.size());
  for (const index_pair& p : pairs) {
    if (check_.within(row(queries_f64_, queries_, p.query), row(data_copy, data_, p.neighbor),
                      queries_.d)) {
      kept.push_back(p);
    }
  }
  if (!kept.empty()) inner_.consume(kept);
}

}  // namespace epsjoin::detail
