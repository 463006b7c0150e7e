#include "support/shapes.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace epsjoin::test {

namespace {

double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

double normal(std::mt19937_64& rng) {
  const double u1 = std::max(unit(rng), 1e-300);
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace

std::string to_string(shape_kind kind) {
  switch (kind) {
    case shape_kind::uniform: return "uniform";
    case shape_kind::clusters: return "clusters";
    case shape_kind::skewed: return "skewed";
    case shape_kind::duplicates: return "duplicates";
    case shape_kind::lattice: return "lattice";
    case shape_kind::embedded: return "embedded";
    case shape_kind::offset: return "offset";
  }
  return "unknown";
}

dataset make_shape(shape_kind kind, std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(kind) * 7919 +
                      d * 104729 + n);
  std::vector<double> v(n * d);
  switch (kind) {
    case shape_kind::uniform:
      for (double& x : v) x = unit(rng);
      break;
    case shape_kind::offset:
      for (double& x : v) x = 1e6 + unit(rng);
      break;
    case shape_kind::skewed:
      for (double& x : v) {
        do x = -std::log(1.0 - unit(rng)) / 40.0;
        while (x > 1.0);
      }
      break;
    case shape_kind::clusters: {
      const std::size_t k = 1 + n / 200;
      std::vector<double> centres(k * d);
      for (double& c : centres) c = unit(rng);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t c = rng() % k;
        for (std::size_t j = 0; j < d; ++j) v[i * d + j] = centres[c * d + j] + 0.01 * normal(rng);
      }
      break;
    }
    case shape_kind::duplicates: {
      const std::size_t distinct = std::max<std::size_t>(1, n / 25);
      std::vector<double> base(distinct * d);
      for (double& b : base) b = unit(rng);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t c = rng() % distinct;
        std::copy_n(base.begin() + static_cast<std::ptrdiff_t>(c * d), d,
                    v.begin() + static_cast<std::ptrdiff_t>(i * d));
      }
      break;
    }
    case shape_kind::lattice: {
      // Multiples of 0.25 are exact in binary, so neighbours sit at distance exactly 0.25.
      const auto side = static_cast<std::uint64_t>(
          std::max(2.0, std::ceil(std::pow(static_cast<double>(n), 1.0 / static_cast<double>(d)))));
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < d; ++j) v[i * d + j] = 0.25 * static_cast<double>(rng() % side);
      }
      break;
    }
    case shape_kind::embedded:
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < d; ++j) v[i * d + j] = j < 2 ? unit(rng) : 0.5;
      }
      break;
  }
  dataset out(std::move(v), d);
  return d == 0 ? dataset() : out;
}

namespace {

double distance(dataset_view a, std::size_t i, dataset_view b, std::size_t j) {
  double s = 0;
  for (std::size_t k = 0; k < a.d; ++k) {
    const double diff = a.at(i, k) - b.at(j, k);
    s += diff * diff;
  }
  return std::sqrt(s);
}

}  // namespace

double eps_for_selectivity(dataset_view queries, dataset_view data, double selectivity) {
  if (queries.n == 0 || data.n < 2) return 0.1;
  std::vector<double> dist;
  const std::size_t samples = std::min<std::size_t>(64, queries.n);
  for (std::size_t s = 0; s < samples; ++s) {
    const std::size_t i = s * queries.n / samples;
    for (std::size_t j = 0; j < data.n; ++j) {
      if (queries.data == data.data && i == j) continue;
      dist.push_back(distance(queries, i, data, j));
    }
  }
  std::sort(dist.begin(), dist.end());
  const double fraction = std::min(1.0, selectivity / static_cast<double>(data.n));
  const auto k = std::min(dist.size() - 1, static_cast<std::size_t>(fraction * dist.size()));
  // Duplicates give distance 0; a positive eps is still required.
  return std::max(dist[k], 1e-6);
}

double eps_for_all_pairs(dataset_view queries, dataset_view data) {
  double diag2 = 0;
  for (std::size_t k = 0; k < data.d; ++k) {
    double lo = INFINITY, hi = -INFINITY;
    for (dataset_view v : {queries, data}) {
      for (std::size_t i = 0; i < v.n; ++i) {
        lo = std::min(lo, v.at(i, k));
        hi = std::max(hi, v.at(i, k));
      }
    }
    if (hi >= lo) diag2 += (hi - lo) * (hi - lo);
  }
  return 2.0 * std::sqrt(diag2) + 1.0;
}

dataset pairs_around_eps(std::size_t d, std::size_t pairs, double eps, double rel, double lo,
                         double hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coord(lo, hi);
  std::normal_distribution<double> normal;
  std::vector<double> values(2 * pairs * d);
  std::vector<double> dir(d);
  for (std::size_t p = 0; p < pairs; ++p) {
    double len = 0;
    for (double& x : dir) {
      x = normal(rng);
      len += x * x;
    }
    len = std::sqrt(len);
    const double r = eps * (p % 2 == 0 ? 1 - rel : 1 + rel);
    for (std::size_t k = 0; k < d; ++k) {
      const double a = coord(rng);
      values[2 * p * d + k] = a;
      values[(2 * p + 1) * d + k] = a + r * dir[k] / len;
    }
  }
  return dataset(std::move(values), d);
}

double eps_clear_of_pairs(dataset_view points, double target, double band) {
  std::vector<double> dist;
  for (std::size_t i = 0; i < points.n; ++i) {
    for (std::size_t j = i + 1; j < points.n; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < points.d; ++k) {
        const double diff = points.at(i, k) - points.at(j, k);
        s += diff * diff;
      }
      dist.push_back(std::sqrt(s));
    }
  }
  std::sort(dist.begin(), dist.end());
  auto clear = [&](double eps) {
    const auto at = std::lower_bound(dist.begin(), dist.end(), eps * (1 - 4 * band));
    return at == dist.end() || *at > eps * (1 + 4 * band);
  };
  if (clear(target)) return target;
  for (auto k = static_cast<std::size_t>(std::lower_bound(dist.begin(), dist.end(), target) -
                                         dist.begin());
       k + 1 < dist.size(); ++k) {
    const double mid = 0.5 * (dist[k] + dist[k + 1]);
    if (clear(mid)) return mid;
  }
  return dist.empty() ? target : dist.back() * 2;
}

}  // namespace epsjoin::test
