// brute-cpu: the oracle. Exact, O(N^2), multithreaded, float64 whatever the input type.
// Deliberately shares no code with the engines (own distance loop, own threading) so a bug
// there cannot hide here.

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/builtin_engines.hpp"
#include "core/timer.hpp"

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

double squared_distance(const double* a, const double* b, std::size_t d) {
  double sum = 0.0;
  for (std::size_t k = 0; k < d; ++k) {
    const double diff = a[k] - b[k];
    sum += diff * diff;
  }
  return sum;
}

class brute_cpu final : public engine {
 public:
  std::string_view name() const override { return "brute-cpu"; }
  std::string_view processor() const override { return "cpu"; }
  std::string_view description() const override {
    return "exact O(N^2) float64 reference (the oracle); multithreaded";
  }

  void run(join_request& req) const override {
    stopwatch clock;
    const oracle_points a(req.queries);
    const oracle_points b(req.self_join ? req.queries : req.data);
    const double eps2 = req.options.eps * req.options.eps;
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
              if (squared_distance(a.row(i), b.row(j), a.d) <= eps2) {
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
