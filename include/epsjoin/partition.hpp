#pragma once
/// @file partition.hpp
/// @brief Cutting a point set into boxes of equal estimated work, each with its halo.
///
/// B boxes along one coordinate, cut where a sample's estimated work (not its point count) is
/// split evenly, and each box's halo: the points of other boxes within eps of it. A join of a
/// box's points against its box and halo finds every neighbour of those points, so boxes can be
/// joined apart: on several GPUs of one process (`resources::set_devices`) or on the ranks of an
/// MPI job (`epsjoin mpi-join`).
/// @code
///   epsjoin::partition_plan plan = epsjoin::plan_partition(res, points.view(), eps, 4, 20000, 1);
///   epsjoin::box_members members = epsjoin::assign_points(plan.partition, points.view());
/// @endcode

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "epsjoin/dataset.hpp"
#include "epsjoin/resources.hpp"

namespace epsjoin {

struct box_partition {
  std::size_t dim = 0;  // the coordinate that is cut
  double eps = 0;
  // boxes - 1 ascending cut points: box r holds coordinates in [splits[r - 1], splits[r]), the
  // first box from -inf, the last to +inf. Equal cuts leave boxes empty (identical points).
  std::vector<double> splits;

  // Inline: assign_points asks them twice for every point of data sets of billions.
  std::size_t boxes() const noexcept { return splits.size() + 1; }
  std::size_t box_of(double x) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(splits.begin(), splits.end(), x) -
                                    splits.begin());
  }
  /// How far past a cut the halo reaches: eps and a margin for the rounding of the engines'
  /// distances (f32 arithmetic included). A wider halo costs candidates, never a wrong pair; a
  /// narrower one would lose pairs, so the margin is generous.
  double reach(double cut) const noexcept { return eps * (1 + 1e-6) + 1e-6 * std::abs(cut); }
  /// The boxes whose halo holds a point at coordinate x, with its own box `home` (box_of(x)): a
  /// run of neighbouring boxes [first, last] that includes home.
  void halo_boxes(double x, std::size_t home, std::size_t& first,
                  std::size_t& last) const noexcept {
    // Box r - 1 ends at splits[r - 1]: a point below it reaches back while within reach of it.
    first = home;
    while (first > 0 && x <= splits[first - 1] + reach(splits[first - 1])) --first;
    // Box r + 1 starts at splits[r].
    last = home;
    while (last + 1 < boxes() && x >= splits[last] - reach(splits[last])) ++last;
  }
  /// The same, finding home first.
  void halo_boxes(double x, std::size_t& first, std::size_t& last) const noexcept {
    halo_boxes(x, box_of(x), first, last);
  }
};

struct partition_plan {
  box_partition partition;
  std::size_t sample_points = 0;
  double sample_seconds = 0;  // the sample's neighbour counts, the work estimate
  // All the points' estimated work (point_cost + neighbours each, in pairs), from the sample.
  double work = 0;
};

/// @brief The sample size plan_partition should take for points in `d` dimensions: 200,000 up to
/// 3-D, where a sample's pair count in a box varies with the sample's own density there (20,000
/// points left boxes of uniform 2-D points 2-6% apart in work, 200,000 within 1%, the sample's
/// join 0.01-0.06 s on 2 cores); 20,000 above, where the sample's join grows with the square of
/// its size (16-D: 0.2 s against 4.8 s on 2 cores) and slabs are rarely the split taken.
std::size_t default_partition_sample(std::size_t d) noexcept;

/// @brief Cuts `points` into `boxes` boxes of about equal estimated work along the coordinate
/// of widest spread. A point's work is estimated as `point_cost` + its neighbours at eps (in units
/// of one result pair), the neighbours scaled from a sample of at most `sample_size` points joined
/// with the library (on `res`'s threads and first device, engine auto), so dense regions get
/// narrower boxes. Where the sample has fewer than 8 neighbours a point at eps, they are counted at
/// a wider radius and scaled down by the ratio of the volumes.
partition_plan plan_partition(resources& res, dataset_view points, double eps, std::size_t boxes,
                              std::size_t sample_size, double point_cost);

/// At most `size` of `points` (float64): one from each of `size` equal runs of their order, at a
/// pseudo-random place fixed by the run's number. The same input always gives the same sample, a
/// file sorted along some coordinate is sampled evenly along it, and a file of repeated copies
/// is not sampled at the same few places of every copy.
dataset take_sample(dataset_view points, std::size_t size);

/// plan_partition on a sample already taken (gathered from the ranks), standing for `n` points.
partition_plan plan_from_sample(resources& res, const dataset& sample, std::size_t n, double eps,
                                std::size_t boxes, double point_cost);

/// @brief The point ids each box owns and its halo, ascending.
struct box_members {
  std::vector<std::vector<std::uint32_t>> own;
  std::vector<std::vector<std::uint32_t>> halo;
};
/// On `threads` threads (0: one); the result does not depend on them.
box_members assign_points(const box_partition& partition, dataset_view points,
                          unsigned threads = 1);

}  // namespace epsjoin
