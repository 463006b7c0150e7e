#include "core/periodic_join.hpp"

#include <algorithm>
#include <cmath>

#include "base/expects.hpp"
#include "base/parallel.hpp"

namespace epsjoin::detail {

double periodic_engine_radius(const join_options& o, std::size_t d, double engine_band) {
  // A shifted coordinate x +- L rounds by at most L 2^-53, and the engine sums d terms of
  // differences of such coordinates: 8 d L 2^-53 covers it with room; the band as for unit vectors.
  const double side = *std::max_element(o.box.begin(), o.box.end());
  double band = engine_band + 1e-12;
  if (o.precision == scalar_type::f32) band += (static_cast<double>(d) + 4) * 1.2e-7;
  return (o.eps + 8 * static_cast<double>(d) * side * 0x1p-53) * (1 + 2 * band);
}

std::vector<std::uint32_t> points_near_faces(const join_options& o, dataset_view points,
                                             double reach, unsigned threads) {
  const std::size_t d = points.d;
  std::vector<std::uint8_t> near(points.n, 0);
  parallel_for(threads, points.n, 1 << 14, [&](std::size_t begin, std::size_t end, unsigned) {
    for (std::size_t i = begin; i < end; ++i) {
      for (std::size_t k = 0; k < d; ++k) {
        const double x = points.at(i, k);
        if (x < reach || x > o.box[k] - reach) {
          near[i] = 1;
          break;
        }
      }
    }
  });
  std::vector<std::uint32_t> ids;
  for (std::size_t i = 0; i < points.n; ++i) {
    if (near[i] != 0) ids.push_back(static_cast<std::uint32_t>(i));
  }
  return ids;
}

periodic_images make_periodic_images(const join_options& o, dataset_view data,
                                     std::span<const std::uint32_t> near, double reach,
                                     const memory_budget& budget) {
  const std::size_t d = data.d;
  // Each dimension offers the point itself and up to two shifted copies: 0, +side, -side.
  std::vector<double> offered(3 * d);
  std::vector<std::size_t> offers(d);
  auto offer = [&](std::size_t i) {
    std::uint64_t copies = 1;
    for (std::size_t k = 0; k < d; ++k) {
      const double x = data.at(i, k), side = o.box[k];
      std::size_t m = 0;
      offered[3 * k + m++] = 0.0;
      if (x < reach) offered[3 * k + m++] = side;
      if (x > side - reach) offered[3 * k + m++] = -side;
      offers[k] = m;
      copies *= m;
    }
    return copies - 1;
  };
  std::uint64_t images = 0;
  for (const std::uint32_t i : near) images += offer(i);
  EPSJOIN_EXPECTS(images <= 0xffffffffull, "the periodic box needs ", images,
                  " images of points near its faces, more than 32-bit ids can number");
  budget.require_host(images * (d * sizeof(double) + sizeof(std::uint32_t)), "the periodic images");
  periodic_images out;
  out.points = dataset(images, d);
  out.original.reserve(images);
  double* values = out.points.f64();
  std::size_t next = 0;
  std::vector<std::size_t> choice(d);
  for (const std::uint32_t i : near) {
    offer(i);
    // Every combination but all zeros, as an odometer over the choices.
    std::fill(choice.begin(), choice.end(), 0);
    for (;;) {
      std::size_t k = 0;
      while (k < d && ++choice[k] == offers[k]) choice[k++] = 0;
      if (k == d) break;
      for (std::size_t j = 0; j < d; ++j) {
        values[next * d + j] = data.at(i, j) + offered[3 * j + choice[j]];
      }
      out.original.push_back(i);
      ++next;
    }
  }
  return out;
}

periodic_queries gather_queries(dataset_view queries, std::vector<std::uint32_t> ids,
                                const memory_budget& budget) {
  const std::size_t d = queries.d;
  budget.require_host(ids.size() * d * sizeof(double), "the queries near the faces");
  periodic_queries out;
  out.original = std::move(ids);
  out.points = dataset(out.original.size(), d);
  double* values = out.points.f64();
  for (std::size_t row = 0; row < out.original.size(); ++row) {
    for (std::size_t k = 0; k < d; ++k) values[row * d + k] = queries.at(out.original[row], k);
  }
  return out;
}

namespace {

const double* f64_rows(dataset_view v, const dataset& copy) {
  return v.type == scalar_type::f64 ? static_cast<const double*>(v.data) : copy.f64();
}

// Whether the queries are the data itself: the same rows, not merely the same first row (a
// prefix of the data, X[:k] against X, starts where the data does).
bool same_rows(dataset_view queries, dataset_view data) {
  return data.data == queries.data && data.n == queries.n && data.type == queries.type;
}

}  // namespace

periodic_filter_sink::periodic_filter_sink(result_sink& inner, const join_options& o,
                                           dataset_view queries, dataset_view data,
                                           const periodic_images& images,
                                           const periodic_queries& near_faces)
    : inner_(inner),
      metric_(o.metric),
      box_(o.box),
      limit_(o.metric == distance_metric::euclidean ? o.eps * o.eps : o.eps),
      queries_f64_(queries.type == scalar_type::f64 ? dataset() : dataset::to_f64(queries)),
      data_f64_(data.type == scalar_type::f64 || same_rows(queries, data) ? dataset()
                                                                           : dataset::to_f64(data)),
      queries_(f64_rows(queries, queries_f64_)),
      data_(same_rows(queries, data) ? queries_ : f64_rows(data, data_f64_)),
      images_(images),
      near_faces_(near_faces),
      d_(queries.d) {}

double periodic_filter_sink::value(const double* a, const double* b) const {
  // brute-cpu's expressions, in its order.
  double acc = 0.0;
  for (std::size_t k = 0; k < d_; ++k) {
    double diff = std::fabs(a[k] - b[k]);
    diff = std::min(diff, box_[k] - diff);
    if (metric_ == distance_metric::euclidean) {
      acc += diff * diff;
    } else if (metric_ == distance_metric::manhattan) {
      acc += diff;
    } else {
      acc = std::max(acc, diff);
    }
  }
  return acc;
}

bool periodic_filter_sink::keep(std::uint32_t q, std::uint32_t image, std::uint32_t j) const {
  const double* qr = queries_ + std::size_t{q} * d_;
  const double* jr = data_ + std::size_t{j} * d_;
  const double* ar = images_.points.f64() + std::size_t{image} * d_;
  // The minimum image shifts dimension k exactly where |q_k - j_k| > side / 2, towards q.
  for (std::size_t k = 0; k < d_; ++k) {
    const double gap = qr[k] - jr[k];
    const bool shift = std::fabs(gap) > box_[k] / 2;
    const bool shifted = ar[k] != jr[k];
    if (shift != shifted) return false;
    if (shifted && (ar[k] > jr[k]) != (gap > 0)) return false;
  }
  return value(qr, jr) <= limit_;
}

void periodic_filter_sink::consume(std::span<const index_pair> pairs) {
  candidates_.fetch_add(pairs.size(), std::memory_order_relaxed);
  std::vector<index_pair> kept;
  kept.reserve(pairs.size());
  for (const index_pair& p : pairs) {
    const std::uint32_t q = near_faces_.original[p.query];
    const std::uint32_t j = images_.original[p.neighbor];
    if (keep(q, p.neighbor, j)) kept.push_back({q, j});
  }
  if (!kept.empty()) inner_.consume(kept);
}

}  // namespace epsjoin::detail
