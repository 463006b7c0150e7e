// brute-cpu: the oracle. Exact, O(N^2), multithreaded, float64 whatever the input type.
// Deliberately shares no code with the engines (own distance loop, own threading) so a bug
// there cannot hide here.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numbers>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "base/timer.hpp"
#include "core/builtin_engines.hpp"

namespace epsjoin::detail {

namespace {

struct oracle_points {
  dataset owned;  // float64 copy when the input is float32
  const double* values;
  std::size_t n, d;

  explicit oracle_points(dataset_view v)
      : owned(v.type == scalar_type::f64 ? dataset() : dataset::to_f64(v)),
        values(v.type == scalar_type::f64 ? static_cast<const double*>(v.data) : owned.f64()),
        n(v.n),
        d(v.d) {}
  const double* row(std::size_t i) const { return values + i * d; }
};

// The oracle's own "within eps" in every metric (docs/metrics.md gives the formulas), written
// here again on purpose: core/metric_join.cpp's float64 re-check computes the same expressions,
// in the same order, so that the two agree bit for bit, and a test compares them.
class oracle_metric {
 public:
  explicit oracle_metric(const join_options& o)
      : metric_(o.metric), box_(o.box), degrees_(o.angles == angle_unit::degrees) {
    eps_ = o.metric == distance_metric::haversine ? o.eps / o.sphere_radius : o.eps;
    eps2_ = eps_ * eps_;
  }

  bool within(const double* a, const double* b, std::size_t d) const {
    switch (metric_) {
      case distance_metric::euclidean: {
        double sum = 0.0;
        for (std::size_t k = 0; k < d; ++k) {
          const double diff = difference(a, b, k);
          sum += diff * diff;
        }
        return sum <= eps2_;
      }
      case distance_metric::manhattan: {
        double sum = 0.0;
        for (std::size_t k = 0; k < d; ++k) sum += difference(a, b, k);
        return sum <= eps_;
      }
      case distance_metric::chebyshev: {
        double most = 0.0;
        for (std::size_t k = 0; k < d; ++k) most = std::max(most, difference(a, b, k));
        return most <= eps_;
      }
      case distance_metric::cosine: return cosine_distance(a, b, d) <= eps_;
      case distance_metric::haversine: return great_circle(a, b) <= eps_;
    }
    return false;
  }

 private:
  // |a_k - b_k|, by the minimum image in a periodic box (coordinates in [0, side)).
  double difference(const double* a, const double* b, std::size_t k) const {
    const double diff = std::fabs(a[k] - b[k]);
    if (box_.empty()) return diff;
    return std::min(diff, box_[k] - diff);
  }
  // Each row scaled by a power of two (exact) so that no sum overflows or underflows.
  static double scale_of(const double* a, std::size_t d) {
    double most = 0.0;
    for (std::size_t k = 0; k < d; ++k) most = std::max(most, std::fabs(a[k]));
    int exponent = 0;
    std::frexp(most, &exponent);
    return std::ldexp(1.0, -exponent);
  }
  static double cosine_distance(const double* a, const double* b, std::size_t d) {
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
  double radians(double x) const { return degrees_ ? x * (std::numbers::pi / 180.0) : x; }
  double great_circle(const double* a, const double* b) const {
    const double lat_a = radians(a[0]), lon_a = radians(a[1]);
    const double lat_b = radians(b[0]), lon_b = radians(b[1]);
    const double s_lat = std::sin((lat_a - lat_b) / 2.0);
    const double s_lon = std::sin((lon_a - lon_b) / 2.0);
    const double h = s_lat * s_lat + std::cos(lat_a) * std::cos(lat_b) * (s_lon * s_lon);
    return 2.0 * std::asin(std::min(1.0, std::sqrt(h)));
  }

  distance_metric metric_;
  std::vector<double> box_;
  bool degrees_;
  double eps_ = 0, eps2_ = 0;
};

class brute_cpu final : public engine {
 public:
  std::string_view name() const override { return "brute-cpu"; }
  std::string_view processor() const override { return "cpu"; }
  std::string_view description() const override {
    return "exact O(N^2) float64 reference (the oracle); multithreaded";
  }

  bool computes(distance_metric) const override { return true; }
  bool takes_periodic_box() const override { return true; }

  void run(join_request& req) const override {
    stopwatch clock;
    const oracle_points a(req.queries);
    const oracle_points b(req.self_join ? req.queries : req.data);
    const oracle_metric metric(req.options);
    const std::size_t rows = a.n;
    // Self-join rows shrink (j > i), so hand them out in small chunks for balance.
    const std::size_t chunk = 16;
    std::atomic<std::size_t> next_row{0}, rows_done{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;

    auto worker = [&](bool reports_progress) {
      std::vector<index_pair> buffer;
      stopwatch since_report;
      auto flush = [&] {
        req.sink.consume(buffer);
        buffer.clear();
      };
      try {
        for (;;) {
          if (failed) return;
          const std::size_t begin = next_row.fetch_add(chunk);
          if (begin >= rows) break;
          const std::size_t end = std::min(rows, begin + chunk);
          for (std::size_t i = begin; i < end; ++i) {
            const auto qi = static_cast<std::uint32_t>(i);
            for (std::size_t j = req.self_join ? i + 1 : 0; j < b.n; ++j) {
              if (metric.within(a.row(i), b.row(j), a.d)) {
                const auto nj = static_cast<std::uint32_t>(j);
                buffer.push_back({qi, nj});
                if (req.self_join) buffer.push_back({nj, qi});
              }
            }
            if (buffer.size() >= (1u << 15)) flush();
          }
          rows_done += end - begin;
          if (reports_progress && req.options.progress && since_report.seconds() > 0.1) {
            // Self-join work per row falls linearly; report the fraction of distances done.
            const double r = static_cast<double>(rows_done) / static_cast<double>(rows);
            req.options.progress(req.self_join ? r * (2.0 - r) : r);
            since_report.restart();
          }
        }
        flush();
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    };

    const unsigned threads = std::max(1u, std::min<unsigned>(req.res.threads(),
                                                             static_cast<unsigned>(rows)));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, false);
    worker(true);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);

    req.stats.candidates = req.self_join ? a.n * (a.n - 1) / 2 : a.n * b.n;
    req.stats.add_stage("execute", clock.seconds());
  }
};

}  // namespace

std::unique_ptr<engine> make_brute_cpu_engine() { return std::make_unique<brute_cpu>(); }

}  // namespace epsjoin::detail
