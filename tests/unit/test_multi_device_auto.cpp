// `--devices auto` (resources::devices_automatic): every visible device is listed, and each join
// decides whether spreading pays. Only a counts-only self-join of at least 1M points is a
// candidate; its sample's work estimate, through modelled_device_seconds, decides, and a join
// the model calls short runs on the first device alone with the one-device result. A stand-in
// that reports a GPU but runs cpu-grid takes the GPU engines' place on any machine.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/multi_device_join.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"
#include "support/harness.hpp"
#include "support/shapes.hpp"

namespace epsjoin::test {
namespace {

class grid_on_gpu final : public detail::engine {
 public:
  grid_on_gpu() : grid_(*detail::find_engine("cpu-grid")) {}
  std::string_view name() const override { return "grid-on-gpu"; }
  std::string_view processor() const override { return "gpu"; }
  std::string_view description() const override { return "test stand-in"; }
  bool reads_device_points() const override { return false; }  // cpu-grid reads them on the host
  void run(detail::join_request& request) const override {
    ++runs;
    grid_.run(request);
  }
  mutable std::atomic<int> runs{0};

 private:
  const detail::engine& grid_;
};

resources automatic_resources(std::size_t devices) {
  resources res(2);
  std::vector<int> ordinals(devices);
  for (std::size_t k = 0; k < devices; ++k) ordinals[k] = static_cast<int>(k);
  res.set_devices(ordinals);
  res.set_devices_automatic(true);
  return res;
}

TEST(multi_device_auto, only_a_large_counts_only_self_join_is_a_candidate) {
  const grid_on_gpu engine;
  const dataset large = make_shape(shape_kind::uniform, 1'000'000, 2, 3);
  const dataset small = make_shape(shape_kind::uniform, 999'999, 2, 4);
  resources res = automatic_resources(2);
  join_options options;
  options.eps = 0.001;
  join_stats stats;
  auto spreads = [&](dataset_view queries, dataset_view data, bool self, result_sink& sink) {
    const detail::join_request request{res, queries, data, self, options, sink, stats, {}, nullptr};
    return detail::spreads_over_devices(engine, request);
  };
  count_sink counts;
  csr_sink rows;
  unique_pairs_sink pairs;
  EXPECT_TRUE(spreads(large.view(), large.view(), true, counts));
  EXPECT_FALSE(spreads(small.view(), small.view(), true, counts)) << "under 1M points";
  EXPECT_FALSE(spreads(large.view(), large.view(), true, rows)) << "rows stay on one device";
  EXPECT_FALSE(spreads(large.view(), large.view(), true, pairs)) << "pairs stay on one device";
  EXPECT_FALSE(spreads(small.view(), large.view(), false, counts)) << "A x B stays";
  // Devices listed by hand: every GPU join spreads, as before.
  res.set_devices_automatic(false);
  EXPECT_TRUE(spreads(small.view(), small.view(), true, counts));
  EXPECT_TRUE(spreads(large.view(), large.view(), true, rows));
  EXPECT_TRUE(spreads(small.view(), large.view(), false, counts));
  // One device listed, automatic or not: nothing to spread over.
  resources one = automatic_resources(1);
  const detail::join_request request{one, large.view(), large.view(), true, options, counts,
                                     stats, {}, nullptr};
  EXPECT_FALSE(detail::spreads_over_devices(engine, request));
}

// The model against the one-H100 times it was fitted to (bench/RESULTS.md, "Several GPUs of one
// host and MPI ranks"; work = points x (700 + S)): each within a factor of 1.5, and the joins a
// GPU finishes in milliseconds far below the one-second line.
TEST(multi_device_auto, the_model_follows_the_measured_one_device_times) {
  struct measured {
    double points, selectivity;
    std::size_t d;
    double seconds;
  };
  for (const measured& m : {measured{50e6, 4976, 2, 2.64}, measured{200e6, 500, 2, 3.17},
                            measured{100e6, 501, 2, 1.64}, measured{4e6, 382, 16, 4.70},
                            measured{8e6, 469, 16, 17.05}}) {
    const double modelled =
        detail::modelled_device_seconds(m.points * (700 + m.selectivity), m.d);
    EXPECT_GT(modelled, m.seconds / 1.5) << m.points << " points at " << m.d << "-D";
    EXPECT_LT(modelled, m.seconds * 1.5) << m.points << " points at " << m.d << "-D";
  }
  EXPECT_LT(detail::modelled_device_seconds(2e6 * (700 + 50), 2), 0.1);
  EXPECT_LT(detail::modelled_device_seconds(1e6 * (700 + 50), 8), 0.5);
  // More dimensions never model a join as cheaper; beyond 16 no dearer.
  for (std::size_t d = 1; d < 64; ++d) {
    EXPECT_LE(detail::modelled_device_seconds(1e9, d), detail::modelled_device_seconds(1e9, d + 1));
  }
  EXPECT_EQ(detail::modelled_device_seconds(1e9, 16), detail::modelled_device_seconds(1e9, 64));
}

// A join the model calls short runs once, on the first device, with the one-device counts; the
// notes say why. Ties at exactly eps (the lattice) included.
TEST(multi_device_auto, a_short_join_runs_on_the_first_device_alone) {
  for (shape_kind kind : {shape_kind::uniform, shape_kind::lattice, shape_kind::duplicates}) {
    SCOPED_TRACE(to_string(kind));
    const dataset points = make_shape(kind, 5000, 2, 31);
    const double eps =
        kind == shape_kind::lattice ? 0.25 : eps_for_selectivity(points.view(), points.view(), 9);
    resources oracle_res(2);
    join_options options;
    options.eps = eps;
    options.engine = "brute-cpu";
    count_sink expected(true);
    self_join(oracle_res, points.view(), options, expected);

    const grid_on_gpu engine;
    resources res = automatic_resources(3);
    join_stats stats;
    count_sink counts(true);
    const auto params = detail::find_engine("cpu-grid")->parse_params(options.params);
    detail::join_request request{res, points.view(), points.view(), true, options, counts,
                                 stats, {}, params.get()};
    counts.begin({points.n(), points.n(), true, false});
    detail::run_on_devices(engine, request);
    counts.finish();
    EXPECT_EQ(engine.runs.load(), 1);
    EXPECT_EQ(counts.per_point(), expected.per_point());
    EXPECT_NE(note_of(stats, "devices_auto").find("device 0 alone"), std::string::npos)
        << note_of(stats, "devices_auto");
    EXPECT_TRUE(note_of(stats, "devices_work").empty());
    EXPECT_EQ(res.threads(), 2u);
  }
}

}  // namespace
}  // namespace epsjoin::test
