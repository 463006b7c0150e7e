#include "core/result_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include "base/expects.hpp"
#include "base/parallel.hpp"
#include "base/timer.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin::detail {

result_footprint result_footprint::of(const result_sink& sink, std::size_t n_queries,
                                      bool self_ids) {
  const sink_request wanted = sink.request();
  return {n_queries, self_ids ? n_queries : 0, wanted.rows_in_place, wanted.bytes_kept_per_pair,
          wanted.bytes_added_per_pair};
}

std::uint64_t result_footprint::bytes(double pairs) const {
  const double per_pair = kept_per_pair + added_per_pair;
  double fewest = per_pair > 0 ? pairs * per_pair : 0;
  if (rows) {
    const double ids = pairs + static_cast<double>(self_ids);
    fewest = std::min(fewest, static_cast<double>(n_queries + 1) * 8 + ids * (4 + added_per_pair));
  }
  // Rounded down, and clamped: a lower bound stays one.
  return fewest >= 0x1p63 ? std::uint64_t{1} << 63 : static_cast<std::uint64_t>(fewest);
}

const char* result_footprint::what() const {
  if (!rows) return "the result";
  return added_per_pair > 0 ? "the neighbour table and the arrays made from it"
                            : "the neighbour table";
}

double total_lower_bound(std::span<const std::uint64_t> counts, std::uint64_t population,
                         double z) {
  double sum = 0;
  for (std::uint64_t c : counts) sum += static_cast<double>(c);
  if (counts.size() < 2) return sum;
  const double s = static_cast<double>(counts.size());
  const double mean = sum / s;
  double squares = 0;
  for (std::uint64_t c : counts) {
    squares += (static_cast<double>(c) - mean) * (static_cast<double>(c) - mean);
  }
  const double sd = std::sqrt(squares / (s - 1));
  // The sample's own deviation stands for the population's: Student's t with s - 1 degrees of
  // freedom, whose quantile (Cornish-Fisher, to 1/v^2) exceeds z by 23% at 48 samples.
  const double v = s - 1;
  const double t =
      z + (z * z * z + z) / (4 * v) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v);
  const double scaled = static_cast<double>(population) * (mean - t * sd / std::sqrt(s));
  return std::max(sum, scaled);
}

double sample_eps(const join_options& options, std::size_t d, double engine_band,
                  double coordinate_bound) {
  const bool f32 = options.precision == scalar_type::f32;
  const bool unit_vectors =
      options.metric == distance_metric::cosine || options.metric == distance_metric::haversine;
  // Float32 unit vectors are decided again in float64 in the metric, from candidates found at a
  // radius widened by the engine's band alone: no margin is known to cover their rounding.
  if (f32 && unit_vectors) return 0;
  double band = std::max(1e-12, engine_band);
  // Float32 rounds each of d squared differences and their sum once (as the tests' band).
  if (f32) band = std::max(band, (static_cast<double>(d) + 4) * 1.2e-7);
  if (options.metric == distance_metric::haversine) band = std::max(band, 1e-10);
  // 1 - cos loses about d ulps of 1, whatever eps is.
  if (options.metric == distance_metric::cosine) {
    band += (4 * static_cast<double>(d) + 16) * 0x1p-53 / options.eps;
  }
  const double margin = std::max(8 * band, 1e-9);
  if (margin >= 0.5) return 0;
  // An engine that rounds float64 coordinates to float32 moves each point by up to
  // sqrt(d) |x|max 2^-24, whatever eps is: a pair that far inside eps may be lost.
  const double moved = f32 ? 4 * std::sqrt(static_cast<double>(d)) * coordinate_bound * 0x1p-24 : 0;
  return std::max(0.0, options.eps * (1 - margin) - moved);
}

namespace {

/// `want` distinct ids of [0, n) (all of them when n is smaller), uniformly at random, sorted.
std::vector<std::uint32_t> sample_ids(std::size_t n, std::size_t want, std::uint64_t seed) {
  std::vector<std::uint32_t> ids;
  ids.reserve(std::min(n, want));
  std::mt19937_64 rng(seed);
  if (want >= n / 8) {
    // Selection sampling (Knuth's algorithm S): one pass, each id kept with the probability
    // that leaves exactly `want`. Drawing with replacement would meet many duplicates here.
    for (std::size_t i = 0; i < n && ids.size() < want; ++i) {
      const double u = static_cast<double>(rng() >> 11) * 0x1p-53;
      if (static_cast<double>(n - i) * u < static_cast<double>(want - ids.size())) {
        ids.push_back(static_cast<std::uint32_t>(i));
      }
    }
    return ids;
  }
  // Few of many: drawn with replacement, the rare duplicates dropped and drawn again.
  std::uniform_int_distribution<std::uint64_t> pick(0, n - 1);
  while (ids.size() < want) {
    const auto old = static_cast<std::ptrdiff_t>(ids.size());
    for (std::size_t k = ids.size(); k < want; ++k)
      ids.push_back(static_cast<std::uint32_t>(pick(rng)));
    std::sort(ids.begin() + old, ids.end());
    std::inplace_merge(ids.begin(), ids.begin() + old, ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  return ids;
}

/// The rows `ids` of host points `v`, in their element type.
dataset gather(dataset_view v, std::span<const std::uint32_t> ids) {
  dataset out(ids.size(), v.d, v.type);
  const std::size_t row = v.d * (v.type == scalar_type::f64 ? sizeof(double) : sizeof(float));
  auto* to =
      v.type == scalar_type::f64 ? static_cast<void*>(out.f64()) : static_cast<void*>(out.f32());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    std::memcpy(static_cast<char*>(to) + k * row,
                static_cast<const char*>(v.data) + std::size_t{ids[k]} * row, row);
  }
  return out;
}

/// Each sampled query's neighbours in `data`, counted at the sample's radius.
std::vector<std::uint64_t> count_sample(resources& res, const dataset& sample, dataset_view data,
                                        const join_options& sample_options) {
  count_sink counts(true);
  join(res, sample.view(), data, sample_options, counts);
  return counts.per_point();
}

/// The sample's options: counted by `sampler` in float64 at `eps`, with its default parameters
/// (the join's are its engine's, and none changes which pairs are found), the caller's progress
/// called with 0 so that it can still cancel.
join_options sample_options_of(const join_options& options, std::string_view sampler, double eps) {
  join_options o;
  o.eps = eps;
  o.engine = std::string(sampler);
  o.metric = options.metric;
  o.angles = options.angles;
  o.sphere_radius = options.sphere_radius;
  o.box = options.box;
  if (options.progress) o.progress = [report = options.progress](double) { report(0); };
  return o;
}

/// The sample's ids that are also among the gate's data points (each counts itself there).
std::uint64_t common_ids(std::span<const std::uint32_t> a, std::span<const std::uint32_t> b) {
  std::uint64_t n = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++n, ++i, ++j;
    }
  }
  return n;
}

/// The rough estimate: the sample against a sample of the data, scaled up by both fractions.
/// It errs either way (a dense cluster missed or hit by the data's sample), so it only decides
/// whether the sample is worth joining against all the data.
/// `scale`: the queries a sampled one stands for.
double rough_pairs(resources& res, const dataset& sample, std::span<const std::uint32_t> sampled,
                   double scale, dataset_view data, bool self, const join_options& o,
                   std::size_t points) {
  const std::vector<std::uint32_t> ids = sample_ids(data.n, points, 0x9e3779b97f4a7c15ull ^ data.n);
  const dataset gate = gather(data, ids);
  double sum = 0;
  for (std::uint64_t c : count_sample(res, sample, gate.view(), o)) sum += static_cast<double>(c);
  // A sampled query among the gate's points counts itself there.
  if (self) sum -= static_cast<double>(common_ids(sampled, ids));
  return sum * scale * static_cast<double>(data.n) / static_cast<double>(ids.size());
}

/// The largest coordinate magnitude of host points `v`.
double largest_coordinate(dataset_view v, unsigned threads) {
  std::mutex m;
  double largest = 0;
  parallel_for(
      threads, v.n * v.d, std::size_t{1} << 16, [&](std::size_t b, std::size_t e, unsigned) {
        double mine = 0;
        for (std::size_t k = b; k < e; ++k) {
          const double x = v.type == scalar_type::f64 ? static_cast<const double*>(v.data)[k]
                                                      : static_cast<const float*>(v.data)[k];
          mine = std::max(mine, std::fabs(x));
        }
        const std::lock_guard<std::mutex> lock(m);
        largest = std::max(largest, mine);
      });
  return largest;
}

/// What float32 coordinates may be rounded from: the points' largest magnitude, and periodic
/// images up to two sides further.
double coordinate_bound(dataset_view queries, dataset_view data, bool self,
                        const join_options& options, unsigned threads) {
  if (options.precision != scalar_type::f32) return 0;
  double bound = largest_coordinate(data, threads);
  if (!self) bound = std::max(bound, largest_coordinate(queries, threads));
  for (double side : options.box) bound = std::max(bound, std::fabs(bound) + 2 * side);
  return bound;
}

std::uint64_t whole(double pairs) { return static_cast<std::uint64_t>(std::llround(pairs)); }

}  // namespace

void refuse_what_cannot_fit(resources& res, dataset_view queries, dataset_view data, bool self,
                            const join_options& options, const estimate_engines& engines,
                            const result_footprint& footprint, const memory_budget& budget,
                            join_stats& stats, const estimate_settings& settings) {
  const std::size_t n_queries = queries.n;
  if (n_queries < settings.sample_queries * settings.queries_per_sample || data.n == 0) return;
  const std::uint64_t available = budget.host_available();
  // Where even every pair there could be fits, there is nothing to estimate.
  const double most = static_cast<double>(n_queries) * static_cast<double>(data.n - (self ? 1 : 0));
  if (footprint.bytes(most) <= available) return;
  stopwatch clock;
  const double eps = sample_eps(options, data.d, engines.band,
                                coordinate_bound(queries, data, self, options, res.threads()));
  if (eps <= 0) return;
  const join_options o = sample_options_of(options, engines.sampler, eps);
  const std::vector<std::uint32_t> sampled =
      sample_ids(n_queries, settings.sample_queries, 0x5851f42d4c957f2dull ^ n_queries);
  const dataset sample = gather(queries, sampled);
  const double scale = static_cast<double>(n_queries) / static_cast<double>(sampled.size());
  if (data.n > settings.gate_points) {
    const double rough =
        rough_pairs(res, sample, sampled, scale, data, self, o, settings.gate_points);
    if (2 * static_cast<double>(footprint.bytes(rough)) < static_cast<double>(available)) {
      stats.add_stage("estimate", clock.seconds());
      stats.notes.emplace_back(
          "result estimate",
          concat("about ", whole(rough), " pairs (", sampled.size(), " sampled queries against ",
                 settings.gate_points, " sampled points)"));
      return;
    }
  }
  std::vector<std::uint64_t> counts = count_sample(res, sample, data, o);
  // Each sampled query finds itself among the data, a pair the self-join does not have.
  if (self) {
    for (std::uint64_t& c : counts) c -= std::min<std::uint64_t>(c, 1);
  }
  double sum = 0;
  for (std::uint64_t c : counts) sum += static_cast<double>(c);
  const double about = sum * scale;
  const double at_least = total_lower_bound(counts, n_queries, settings.z);
  stats.add_stage("estimate", clock.seconds());
  stats.notes.emplace_back(
      "result estimate", concat("about ", whole(about), " pairs, at least ", whole(at_least), " (",
                                sampled.size(), " sampled queries)"));
  budget.require_host_at_least(
      footprint.bytes(at_least), footprint.what(),
      concat("estimated from ", sampled.size(), " sampled queries: about ",
             human_bytes(footprint.bytes(about)), ", ", whole(about), " pairs"));
}

}  // namespace epsjoin::detail
