#include "epsjoin/partition.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "base/parallel.hpp"
#include "core/partition_detail.hpp"
#include "epsjoin/join.hpp"
#include "epsjoin/sink.hpp"

namespace epsjoin {

namespace {

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

dataset take_sample(dataset_view points, std::size_t size) {
  const std::size_t n = points.n;
  const std::size_t take = std::min(n, size);
  dataset sample(take, points.d, scalar_type::f64);
  for (std::size_t k = 0; k < take; ++k) {
    // One point of each of `take` equal runs of the order, at a place fixed by the run's number
    // (splitmix64), not its middle: a file of repeated copies (tiles, replicas) sampled at a
    // fixed stride could hit the same few points of every copy. (Coastline x 2000 copies at
    // 100M points: a stride of 5000 saw 10 distinct points, and the cuts left one of two GPUs
    // with 2.3x the other's pairs.)
    const std::size_t begin = k * n / take, end = (k + 1) * n / take;
    const std::size_t i = take == n ? k : begin + splitmix64(k) % (end - begin);
    for (std::size_t c = 0; c < points.d; ++c) sample.f64()[k * points.d + c] = points.at(i, c);
  }
  return sample;
}

namespace {

std::size_t widest_dimension(const dataset& sample) {
  std::size_t best = 0;
  double best_spread = -1;
  for (std::size_t c = 0; c < sample.d(); ++c) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t k = 0; k < sample.n(); ++k) {
      lo = std::min(lo, sample.f64()[k * sample.d() + c]);
      hi = std::max(hi, sample.f64()[k * sample.d() + c]);
    }
    if (hi - lo > best_spread) {
      best_spread = hi - lo;
      best = c;
    }
  }
  return best;
}

}  // namespace

std::size_t default_partition_sample(std::size_t d) noexcept { return d <= 3 ? 200000 : 20000; }

partition_plan plan_partition(resources& res, dataset_view points, double eps, std::size_t boxes,
                              std::size_t sample_size, double point_cost) {
  if (boxes <= 1 || points.n == 0)
    return plan_from_sample(res, dataset(), 0, eps, boxes, point_cost);
  return plan_from_sample(res, take_sample(points, sample_size), points.n, eps, boxes, point_cost);
}

partition_plan plan_from_sample(resources& res, const dataset& sample, std::size_t n, double eps,
                                std::size_t boxes, double point_cost) {
  partition_plan plan;
  plan.partition.eps = eps;
  if (boxes <= 1 || n == 0 || sample.n() == 0) {
    // One box, or nothing to cut by: every point in the first box.
    plan.partition.splits.assign(boxes > 0 ? boxes - 1 : 0,
                                 std::numeric_limits<double>::infinity());
    return plan;
  }
  plan.sample_points = sample.n();
  const std::size_t dim = widest_dimension(sample);
  plan.partition.dim = dim;

  const auto start = std::chrono::steady_clock::now();
  // One device: a sample joined on several would be partitioned again, without end.
  resources sample_res(res.threads(), res.device());
  sample_res.set_memory(res.memory());
  double total_count = 0;
  auto count_within = [&](double radius) {
    count_sink counter(true);
    join_options options;
    options.eps = radius;
    self_join(sample_res, sample.view(), options, counter);
    total_count = static_cast<double>(counter.total());
    return std::vector<double>(counter.per_point().begin(), counter.per_point().end());
  };
  std::vector<double> neighbours = count_within(eps);
  // A sample point stands for n / s points, and its sample neighbours for n / s times as many.
  double scale = static_cast<double>(n) / static_cast<double>(sample.n());
  // Where the sample is too thin for eps (200M points at S 500: 0.05 sample neighbours a point),
  // the few points that happen to have one would carry all the estimated work, and the cuts
  // would follow them (10% imbalance on 2 GPUs). The counts then come from a wider radius, where
  // the mean is `enough`, scaled down by the volume's ratio: the same density, measured over more.
  constexpr double enough = 8;
  const double mean = total_count / static_cast<double>(sample.n());
  if (mean < enough && sample.n() > 1) {
    const double d = static_cast<double>(sample.d());
    const double widen =
        std::min(64.0, std::pow(enough / std::max(mean, 0.5 / static_cast<double>(sample.n())),
                                1.0 / d));
    neighbours = count_within(eps * widen);
    scale /= std::pow(widen, d);
  }
  plan.sample_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<std::size_t> order(sample.n());
  std::iota(order.begin(), order.end(), 0);
  auto coordinate = [&](std::size_t k) { return sample.f64()[k * sample.d() + dim]; };
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return coordinate(a) < coordinate(b); });
  double total = 0;
  // Summed in the order of the walk below, so that its last partial sum is exactly the total.
  for (std::size_t k : order)
    total += point_cost + scale * neighbours[k];
  plan.work = total * static_cast<double>(n) / static_cast<double>(sample.n());
  double so_far = 0;
  std::size_t next_cut = 1;
  for (std::size_t k : order) {
    so_far += point_cost + scale * neighbours[k];
    while (next_cut < boxes && so_far >= total * static_cast<double>(next_cut) / boxes) {
      plan.partition.splits.push_back(coordinate(k));
      ++next_cut;
    }
  }
  // Rounding can leave the last cut unplaced; it goes past every point (an empty last box).
  while (plan.partition.splits.size() + 1 < boxes) {
    plan.partition.splits.push_back(std::numeric_limits<double>::infinity());
  }
  return plan;
}

namespace detail {

void assign_points_to(
    const box_partition& partition, dataset_view points, unsigned threads,
    const std::function<member_arrays(std::size_t, std::uint64_t, std::uint64_t)>& place) {
  const std::size_t boxes = partition.boxes();
  // Two passes over fixed chunks: each chunk counts its members per box, the counts' prefix sums
  // place every chunk's members, and the second pass writes them there, so the lists come out
  // ascending whatever the number of threads.
  constexpr std::size_t chunk = std::size_t{1} << 16;
  const std::size_t chunks = (points.n + chunk - 1) / chunk;
  std::vector<std::uint64_t> own_at(chunks * boxes, 0), halo_at(chunks * boxes, 0);
  auto visit = [&](std::size_t c, auto&& on_own, auto&& on_halo) {
    const std::size_t end = std::min(points.n, (c + 1) * chunk);
    for (std::size_t i = c * chunk; i < end; ++i) {
      const double x = points.at(i, partition.dim);
      const std::size_t home = partition.box_of(x);
      on_own(home, i);
      std::size_t first = 0, last = 0;
      partition.halo_boxes(x, home, first, last);
      for (std::size_t b = first; b <= last; ++b) {
        if (b != home) on_halo(b, i);
      }
    }
  };
  // Each chunk counts and places with counters of its own, loaded and stored once: neighbouring
  // chunks' counters share cache lines, and an increment there for every point is slow.
  parallel_for(threads, chunks, 1, [&](std::size_t begin, std::size_t end, unsigned) {
    std::vector<std::uint64_t> own(boxes), halo(boxes);
    for (std::size_t c = begin; c < end; ++c) {
      std::fill(own.begin(), own.end(), 0);
      std::fill(halo.begin(), halo.end(), 0);
      visit(
          c, [&](std::size_t box, std::size_t) { ++own[box]; },
          [&](std::size_t box, std::size_t) { ++halo[box]; });
      std::copy(own.begin(), own.end(), own_at.begin() + static_cast<std::ptrdiff_t>(c * boxes));
      std::copy(halo.begin(), halo.end(), halo_at.begin() + static_cast<std::ptrdiff_t>(c * boxes));
    }
  });
  std::vector<member_arrays> to(boxes);
  for (std::size_t b = 0; b < boxes; ++b) {
    std::uint64_t own = 0, halo = 0;
    for (std::size_t c = 0; c < chunks; ++c) {
      own += std::exchange(own_at[c * boxes + b], own);
      halo += std::exchange(halo_at[c * boxes + b], halo);
    }
    to[b] = place(b, own, halo);
  }
  parallel_for(threads, chunks, 1, [&](std::size_t begin, std::size_t end, unsigned) {
    std::vector<std::uint64_t> own(boxes), halo(boxes);
    for (std::size_t c = begin; c < end; ++c) {
      std::copy_n(own_at.begin() + static_cast<std::ptrdiff_t>(c * boxes), boxes, own.begin());
      std::copy_n(halo_at.begin() + static_cast<std::ptrdiff_t>(c * boxes), boxes, halo.begin());
      visit(
          c,
          [&](std::size_t box, std::size_t i) {
            to[box].own[own[box]++] = static_cast<std::uint32_t>(i);
          },
          [&](std::size_t box, std::size_t i) {
            to[box].halo[halo[box]++] = static_cast<std::uint32_t>(i);
          });
    }
  });
}

}  // namespace detail

box_members assign_points(const box_partition& partition, dataset_view points, unsigned threads) {
  box_members members;
  members.own.resize(partition.boxes());
  members.halo.resize(partition.boxes());
  detail::assign_points_to(partition, points, threads,
                           [&](std::size_t box, std::uint64_t own, std::uint64_t halo) {
                             members.own[box].resize(own);
                             members.halo[box].resize(halo);
                             return detail::member_arrays{members.own[box].data(),
                                                          members.halo[box].data()};
                           });
  return members;
}

}  // namespace epsjoin
