// The library's slab planner (epsjoin/partition.hpp) for Python: points in, cuts out, as
// mpi-join and the devices of one process cut (issue 47's plan: Dask partitions join apart).

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <epsjoin/partition.hpp>

#include "join_calls.hpp"
#include "released_call.hpp"

namespace epsjoin_python {

nb::tuple plan_slabs(points_array points, std::size_t sample_size, std::size_t n_points,
                     double eps, std::size_t slabs, double point_cost, const run_settings& s) {
  const epsjoin::dataset_view v = view_of(points);
  if (slabs == 0) throw epsjoin::invalid_argument("the number of slabs must be at least 1");
  if (n_points < v.n) {
    throw epsjoin::invalid_argument("n_points must count at least the points given");
  }
  const epsjoin::partition_plan plan = run_released(s, [&](epsjoin::resources& res) {
    const epsjoin::dataset sample = epsjoin::take_sample(v, sample_size);
    return epsjoin::plan_from_sample(res, sample, n_points, eps, slabs, point_cost);
  });
  return nb::make_tuple(plan.partition.dim, plan.partition.splits, plan.work, plan.sample_points,
                        plan.sample_seconds);
}

}  // namespace epsjoin_python
